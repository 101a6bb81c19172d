"""The zip/OLE guards run before any office library opens a file."""
from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from monkeyllm_gardener.conversion import ConversionError, UnsupportedFile
from monkeyllm_plugins._container import check_zip_container, ole_stream_names

from _containers import OLE_MAGIC, ole_container  # noqa: E402 - tests/plugins is on sys.path


def small_zip(path: Path, members: int = 2) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(members):
            archive.writestr(f"part{index}.xml", f"<part n='{index}'/>")
    return path


def assert_one_line_naming(error: pytest.ExceptionInfo, path: Path) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(path.name + ":")
    return message


def test_a_sane_zip_passes(tmp_path: Path) -> None:
    check_zip_container(small_zip(tmp_path / "ok.xlsx"))


@pytest.mark.parametrize(
    ("file_name", "streams", "expected"),
    [
        ("budget.xlsx", ["EncryptionInfo", "EncryptedPackage"], "encrypted (password-protected) workbook: remove the password"),
        ("memo.docx", ["EncryptionInfo", "EncryptedPackage"], "encrypted (password-protected) document: remove the password"),
        ("memo.docx", ["WordDocument", "1Table"], "legacy Word .doc renamed .docx: open it in Word and save it as .docx"),
        ("budget.xlsx", ["Workbook"], "legacy Excel .xls renamed .xlsx"),
        ("budget.xlsx", ["WordDocument"], "legacy Word .doc renamed .xlsx"),
    ],
)
def test_ole_containers_behind_zip_names_are_named_for_what_they_are(
    tmp_path: Path, file_name: str, streams: list[str], expected: str
) -> None:
    path = tmp_path / file_name
    path.write_bytes(ole_container(streams))
    with pytest.raises(UnsupportedFile) as error:
        check_zip_container(path)
    message = assert_one_line_naming(error, path)
    assert expected in message
    assert "corrupt" not in message


def test_ole_directory_is_parsed_across_several_directory_sectors(tmp_path: Path) -> None:
    path = tmp_path / "x.doc"
    names = ["One", "Two", "Three", "Four", "Five", "EncryptedPackage"]
    path.write_bytes(ole_container(names))
    assert ole_stream_names(path) == {"Root Entry", *names}


def test_an_ole_file_with_a_broken_directory_is_still_seen_as_encrypted(tmp_path: Path) -> None:
    path = tmp_path / "locked.xlsx"
    path.write_bytes(OLE_MAGIC + bytes(600) + "EncryptedPackage".encode("utf-16-le") + bytes(100))
    with pytest.raises(UnsupportedFile, match="encrypted"):
        check_zip_container(path)


def test_zero_byte_file_is_reported_empty(tmp_path: Path) -> None:
    path = tmp_path / "blank.docx"
    path.write_bytes(b"")
    with pytest.raises(ConversionError) as error:
        check_zip_container(path)
    assert "empty file" in assert_one_line_naming(error, path)


def test_truncated_zip_is_reported_corrupt_or_truncated(tmp_path: Path) -> None:
    whole = small_zip(tmp_path / "whole.xlsx", members=5).read_bytes()
    path = tmp_path / "cut.xlsx"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ConversionError) as error:
        check_zip_container(path)
    assert "corrupt or truncated zip container" in assert_one_line_naming(error, path)


def test_zip_whose_member_runs_past_the_end_is_truncated(tmp_path: Path) -> None:
    data = bytearray(small_zip(tmp_path / "whole.xlsx").read_bytes())
    # Claim the first member is far larger compressed than the file: its bytes are "missing".
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 20, 10_000_000)
    path = tmp_path / "cut.xlsx"
    path.write_bytes(bytes(data))
    with pytest.raises(ConversionError, match="corrupt or truncated zip container"):
        check_zip_container(path)


def test_a_file_that_is_neither_zip_nor_ole_is_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "table.xlsx"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(UnsupportedFile, match="no zip container"):
        check_zip_container(path)


def test_declared_two_gigabyte_member_is_refused_as_a_zip_bomb(tmp_path: Path) -> None:
    data = bytearray(small_zip(tmp_path / "base.docx", members=1).read_bytes())
    two_gib = 2 * 1024**3 - 1
    struct.pack_into("<I", data, data.index(b"PK\x03\x04") + 22, two_gib)
    struct.pack_into("<I", data, data.index(b"PK\x01\x02") + 24, two_gib)
    path = tmp_path / "bomb.docx"
    path.write_bytes(bytes(data))
    with pytest.raises(ConversionError) as error:
        check_zip_container(path)
    message = assert_one_line_naming(error, path)
    assert "refused: looks like a zip bomb" in message and str(two_gib) in message


def test_highly_compressed_member_is_refused_as_a_zip_bomb(tmp_path: Path) -> None:
    path = tmp_path / "ratio.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("xl/worksheets/sheet1.xml", "w") as member:
            chunk = bytes(1024 * 1024)
            for _ in range(16):  # 16 MiB of zeros, ~16 KiB compressed
                member.write(chunk)
    with pytest.raises(ConversionError, match=r"zip bomb \(a member compresses \d+:1, limit 200:1\)"):
        check_zip_container(path)


def test_too_many_members_is_refused_as_a_zip_bomb(tmp_path: Path) -> None:
    path = small_zip(tmp_path / "many.xlsx", members=6)
    with pytest.raises(ConversionError, match=r"zip bomb \(6 members, limit 5\)"):
        check_zip_container(path, max_members=5)
    check_zip_container(path, max_members=6)


def test_small_repetitive_members_are_not_mistaken_for_bombs(tmp_path: Path) -> None:
    path = tmp_path / "styles.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("styles.xml", "<x/>" * 100_000)  # 400 KB, ratio far above 200
    check_zip_container(path)
    assert zipfile.ZipFile(io.BytesIO(path.read_bytes())).infolist()[0].file_size == 400_000
