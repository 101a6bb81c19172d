"""Source files made in code for the converter tests, and conversions read back the
way the engine loads them: ``write_source`` writes a file under tmp_path,
``save_workbook`` saves an openpyxl workbook, ``load`` builds the dataset a
conversion describes in real SQLite and reads its one table back."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from monkeyllm_core.data.dataset import create_dataset
from monkeyllm_gardener.conversion import Conversion


def write_source(tmp_path: Path, name: str, content: str | bytes, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def save_workbook(workbook: Any, path: Path) -> Path:
    workbook.save(path)
    return path


def only_table(conversion: Conversion) -> tuple[str, dict[str, str]]:
    (table, spec), = conversion.schema.items()
    return table, dict(spec["columns"])


def load(tmp_path: Path, conversion: Conversion) -> list[tuple]:
    """Load the conversion the way the engine does and read the table back."""
    db_path = tmp_path / "loaded.db"
    create_dataset(db_path, conversion.schema, conversion.rows)
    table, _ = only_table(conversion)
    with sqlite3.connect(db_path) as connection:
        return connection.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
