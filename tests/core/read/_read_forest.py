"""The forest the read-engine tests walk, planted with Vine.plant, and their helpers.

It holds what issue 12 asks the tests to cover: typed edges both ways (with an
inverse, symmetric, and without an inverse), a broken link, cross trails, a body
over 4000 tokens with a section that is over it alone, a dataset wider than 12
columns, a dataset whose manual alone is over look's budget, a 60-child branch,
a hub with more than 12 edges each way, and non-ASCII text (Portuguese,
Japanese). Tests import it by this name; conftest.py holds only the fixtures.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from monkeyllm_core import Vine

# what people may type into a search box, operators and all
NASTY = ['"', '""', "'", "AND", "OR NOT", "NEAR(a b)", "(", ")", "*", "-", "a-b", "col:val", "^start",
         "x\u0301", "\u200f", "🍌", "{}", "[[x]]", "a OR", "NOT NOT", "%_", "\\", "''' ; DROP TABLE nodes; --"]

SALES_SUMMARY = "Commercial policy, price lists and the 2026 order ledger."
EXCHANGE_SUMMARY = "Return and exchange windows per channel, with invoice rules."

EXCHANGE_BODY = """# Exchange policy

## Channels

Retail exchange is handled at the counter; online orders by courier.

## Deadlines

Retail returns close 30 days after the invoice date.

### Online

Online returns close 14 days after delivery.

```
## Not a heading: inside a fence
```

## Invoice rules

An exchange reissues the invoice NF-4412 under the same series.
"""


def _paragraph(topic: str, words: int) -> str:
    vocabulary = ["the", "party", "shall", "pay", "within", "thirty", "days", "of", "invoice", "and", "notice",
                  "terms", "apply", "to", "each", "order", "under", "this", "agreement", topic]
    return " ".join(vocabulary[i % len(vocabulary)] for i in range(words)) + "."


MASTER_BODY = "# Master agreement 2026\n\n" + "".join(
    f"## {name}\n\n{_paragraph(name.lower(), words)}\n\n"
    for name, words in (("Parties", 300), ("Scope", 400), ("Payment terms", 700), ("Termination", 500),
                        ("Annexes", 3300)))


def plant_forest(root: Path) -> None:
    with Vine(root) as vine, vine.bulk():
        plant = vine.plant
        plant({"id": "sales/_index", "title": "Sales", "summary": SALES_SUMMARY})
        plant({"id": "people/_index", "title": "People", "summary": "The people of the company and what they own."})
        plant({"id": "contracts/_index", "title": "Contracts", "summary": "Signed contracts with customers and suppliers."})
        plant({"id": "relatorios/_index", "title": "Relatórios", "summary": "Relatórios de exportação e cadastros, 2026."})
        plant({"id": "catalog/_index", "title": "Product catalog", "summary": "Sixty products sold in 2026, one node each."})
        plant({"id": "sales/pipeline/_index", "title": "Pipeline", "summary": "Prospects worked in 2026, by quarter."})
        plant({"id": "people/ana-ribeiro", "type": "entity", "title": "Ana Ribeiro",
               "summary": "Sales lead for the Southeast region since 2024; owns the exchange policy.",
               "tags": ["people", "sales"], "body": "# Ana Ribeiro\n\n## Role\n\nSales lead.\n"})
        plant({"id": "contracts/master-agreement", "type": "document", "title": "Master agreement 2026",
               "summary": "The 2026 master agreement with Acme: parties, scope, payment terms and annexes.",
               "tags": ["contracts", "legal"], "confidence": 0.7, "source": "ingest", "body": MASTER_BODY})
        plant({"id": "sales/price-list", "type": "note", "title": "Price list",
               "summary": "Prices per product for 2026, in USD, with volume discounts.", "tags": ["sales", "prices"],
               "links": [{"rel": "related-to", "target": "sales/retired-list"}],
               "body": "# Price list\n\n## Products\n\nSee the catalog.\n"})
        plant({"id": "sales/exchange-policy", "type": "note", "title": "Exchange policy", "summary": EXCHANGE_SUMMARY,
               "tags": ["sales", "policy"], "aliases": ["returns policy"],
               "links": [{"rel": "related-to", "target": "sales/price-list"},
                         {"rel": "part-of", "target": "sales/_index"}],
               "body": EXCHANGE_BODY})
        plant({"id": "sales/exchange-policy-2027", "type": "note", "title": "Exchange policy 2027",
               "summary": "Return and exchange windows for 2027, superseding the 2026 rules.",
               "tags": ["sales", "policy"], "links": [{"rel": "succeeds", "target": "sales/exchange-policy"},
                                                       {"rel": "discovered-shortcut", "target": "sales/price-list"}]})
        plant({"id": "sales/orders-2026", "type": "dataset", "title": "Orders 2026",
               "summary": "Every closed order of 2026, one row per order, with region and value.",
               "tags": ["sales", "ledger"],
               "schema": {"orders": {"columns": {"id": "TEXT", "customer": "TEXT", "region": "TEXT",
                                                 "total_invoice": "TEXT", "closed_at": "TEXT"},
                                     "primary_key": ["id"]}},
               "rows": {"orders": [["1045", "Acme", "Southeast", "USD 54.607,56", "2026-02-11"],
                                   ["1046", "Globex", "South", "USD 1.200,00", "2026-03-02"],
                                   ["1047", "Initech | Ltd", "Northeast", "USD 99,90", "2026-03-05"],
                                   ["1048", "Umbrella", "Southeast", "USD 10,00", "2026-04-01"]]},
               "body": "# Orders 2026\n\n## Notes\n\ntotal_invoice is TEXT holding a formatted amount, so SUM() "
                       "returns 0. Cast it, or count orders by region.\n"})
        wide = {f"metric_{n:02d}_value": "REAL" for n in range(15)}
        plant({"id": "sales/wide-ledger", "type": "dataset", "title": "Wide ledger",
               "summary": "Sixteen columns of 2026 sales metrics per day, wider than a sample shows.",
               "schema": {"ledger": {"columns": {"day": "TEXT", **wide}}},
               "rows": {"ledger": [[f"2026-01-0{d}", *[float(d * n) for n in range(15)]] for d in range(1, 4)]},
               "body": "# Wide ledger\n\n## Notes\n\nMetrics are daily totals.\n"})
        warehouse = {f"stock_table_{t}": {"columns": {f"warehouse_column_number_{c:02d}": "TEXT" for c in range(30)}}
                     for t in range(8)}
        plant({"id": "sales/warehouse", "type": "dataset", "title": "Warehouse stock",
               "summary": "Eight stock tables of thirty columns each, one per warehouse, 2026.",
               "schema": warehouse, "rows": {"stock_table_0": [[f"v{c}" for c in range(30)]]},
               "body": "# Warehouse stock\n\n## Notes\n\n" + _paragraph("stock", 450) + "\n"})
        plant({"id": "sales/pipeline/prospects-q2", "type": "dataset", "title": "Prospects Q2",
               "summary": "Prospects worked in Q2 2026, with owner, stage and expected value.",
               "tags": ["sales", "pipeline"],
               "schema": {"prospects": {"columns": {"name": "TEXT", "owner": "TEXT", "stage": "TEXT"}}},
               "rows": {"prospects": [["Acme", "Ana", "won"]]}})
        plant({"id": "relatorios/exportacoes-2026", "type": "note", "title": "Relatório de exportações 2026",
               "summary": "Exportações por região em 2026: soja, café e açúcar, com preços em reais.",
               "tags": ["exportação", "relatório"], "body": "# Relatório\n\n## Regiões\n\nSudeste lidera.\n"})
        plant({"id": "relatorios/社員名簿", "type": "note", "title": "社員名簿",
               "summary": "社員の名前と部署の一覧、2026年4月時点。", "body": "# 社員名簿\n\n## 営業部\n\n田中さん。\n"})
        for n in range(60):
            links = [{"rel": "author", "target": "people/ana-ribeiro"}] if n < 20 else []
            plant({"id": f"catalog/item-{n:02d}", "type": "note", "title": f"Product {n:02d}",
                   "summary": f"Product {n:02d} of the 2026 catalog: a widget sold in boxes of {n + 1}, "
                              f"priced per box with the volume discounts of the price list.",
                   "tags": ["catalog"] + (["featured"] if n % 10 == 0 else []), "links": links,
                   "created": "2026-01-01", "updated": f"2026-{n % 12 + 1:02d}-15",
                   "body": f"# Product {n:02d}\n\n## Specs\n\nBox of {n + 1}.\n"})
        vine.graft("people/ana-ribeiro", {"add_links": [
            {"rel": "mentioned-in", "target": "sales/exchange-policy"},
            *({"rel": "related-to", "target": f"catalog/item-{n:02d}"} for n in range(20, 34))]})
        vine.graft("sales/_index", {"replace_section": {"header": "Cross trails", "body":
                   "- Contractor terms are not sales policy -> [[contracts/master-agreement]]\n"
                   "- [[people/ana-ribeiro]] — owns the exchange policy"}})


def planted_base(parent: Path, name: str, title: str) -> Path:
    """A new forest ``parent/name`` holding this module's nodes: the session-scoped
    base the read, serve and troop tests each copy per test (``private_copy``)."""
    from monkeyllm_core import init_forest

    root = init_forest(parent / name, title)
    plant_forest(root)
    return root


def private_copy(base: Path, root: Path) -> Path:
    """A copy of a planted forest (its git and catalog) without the heat and traces of
    the reads made on the original, so one test's scent never reaches another."""
    shutil.copytree(base, root, symlinks=True)
    shutil.rmtree(root / "_derived" / "traces", ignore_errors=True)
    (root / "_derived" / "trails.db").unlink(missing_ok=True)
    return root


def node_ids(vine: Vine) -> list[str]:
    return [row[0] for row in vine.catalog.db.execute("SELECT id FROM nodes ORDER BY id")]


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def vine_cli(*args: str, env: dict[str, str] | None = None) -> Ran:
    """The real `vine` command in a subprocess."""
    proc = subprocess.run([sys.executable, "-m", "monkeyllm_gardener.cli", *args], capture_output=True,
                          text=True, timeout=120, env=env)
    return Ran(proc.returncode, proc.stdout, proc.stderr)
