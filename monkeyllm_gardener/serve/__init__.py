"""``vine serve``: a forest (or a folder of forests) for agents, over MCP and REST.

- ``tools``: every call a served forest answers, with its schema and description,
  and the one argument check all transports share;
- ``forest_service``: one forest served (its own thread, a long-lived reader, a
  writer opened per write);
- ``forests``: ``--forest DIR`` or ``--root DIR``, the forests by name;
- ``principal``: who is calling (a key's name, forest and read-only flag), and what they may do.
"""
