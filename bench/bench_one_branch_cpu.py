"""CPU per plant into ONE branch as it grows to 2,000 children (the branch-upkeep
cost that grows with the index), one bulk session. Run it with each tree's
interpreter one after the other to compare two trees:

    .venv/bin/python bench/bench_one_branch_cpu.py LABEL
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path
from monkeyllm_core import Vine, init_forest
tmp = tempfile.mkdtemp()
root = init_forest(Path(tmp) / "f", "bench")
vine = Vine(root)
samples = []
with vine.bulk():
    vine.plant({"id": "notes/_index", "title": "Notes", "summary": "Every note."})
    for i in range(2000):
        t = time.process_time()
        vine.plant({"id": f"notes/n{i:05d}", "type": "note", "title": f"Fact {i}", "summary": f"Fact number {i}: one sentence.",
                    "body": f"# Fact {i}\n\nA small note {i}.\n"})
        samples.append(time.process_time() - t)
vine.close()
print(sys.argv[1] if len(sys.argv) > 1 else "this tree", "CPU ms per plant, plants 1,901-2,000 median %.2f, 1-100 median %.2f" % (statistics.median(samples[1900:]) * 1000, statistics.median(samples[:100]) * 1000))
