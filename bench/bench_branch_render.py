import time, sys
from monkeyllm_core.forest import passport
fm = {"id": "d1/s2/t1/_index", "type": "branch", "title": "T1", "summary": "Documents adopted from source folder 't1'.",
      "created": "2026-12-01", "updated": "2026-12-01", "source": "ingest", "origin": "file:///exports/d1/s2/t1",
      "source_path": "d1/s2/t1", "coverage": "37 bananas, 0 sub-branches"}
body = "# T1\n\n> x\n\n## Direct bananas\n" + "".join(f"- [[d1/n{i}]] — Note {i}.\n" for i in range(40))
t = time.process_time()
for i in range(3000):
    fm["coverage"] = f"{i % 50} bananas, 0 sub-branches"
    passport.render_node_parsed(fm, body)
print(sys.argv[1], f"{(time.process_time() - t) / 3000 * 1e6:.1f} us per branch render+parse")
