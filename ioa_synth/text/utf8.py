"""Decoding input files: UTF-8, with or without a byte-order mark (Windows editors write
one), and the one message for a file in another encoding (the one helper; every reader
of a user's file decodes through :func:`decode_utf8`)."""

from __future__ import annotations

import codecs


def decode_utf8(raw: bytes, where: object, error: type[ValueError] = ValueError) -> str:
    """``raw`` (the bytes of the file ``where``) as text; a UTF-8 BOM is dropped.

    Raises:
        error: ``"<where>: not UTF-8 text (...); save it as UTF-8"``, naming UTF-16/32
            when the file starts with their byte-order mark (what Windows tools write as
            "Unicode"), else the first bad byte.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
            why = "it is UTF-32"
        elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            why = "it is UTF-16"
        else:
            why = f"byte {exc.start}: {exc.reason}"
        raise error(f"{where}: not UTF-8 text ({why}); save it as UTF-8") from None
