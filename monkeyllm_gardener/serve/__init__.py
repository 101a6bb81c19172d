"""``vine serve``: a forest (or a folder of forests) for agents, over MCP and REST.

- ``tools``: every call a served forest answers, with its schema and description,
  and the one argument check all transports share;
- ``forest_service``: one forest served (its own thread, a long-lived reader, a
  writer opened per write);
- ``forests``: ``--forest DIR`` or ``--root DIR``, the forests by name;
- ``payloads``: a node's payload file, only ever one inside the forest (``view``, REST);
- ``principal``: who is calling (a key's name, forest and read-only flag), and what they may do;
- ``answer``: harvest plus the forest's model (``answer_model``: its binding, meter
  and errors; ``answer_hops``: the navigator loop driving the reads; ``answer_cache``).
"""
