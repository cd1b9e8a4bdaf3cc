"""A request's parameters as UDPipe's server reads them: the query string, then the body
(``application/x-www-form-urlencoded`` or ``multipart/form-data``) whose values replace the
query's; a later value of a name replaces an earlier one. Names and values must be UTF-8."""

from __future__ import annotations

import email.parser
import email.policy
from urllib.parse import unquote_to_bytes

from dparse.serve.errors import BAD_REQUEST, RequestError

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


def utf8(value: bytes, what: str) -> str:
    """``value`` decoded as UTF-8; RequestError (400) naming ``what``, the line and column of
    the first byte that is not UTF-8, and the byte."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = value.count(b"\n", 0, exc.start) + 1
        column = exc.start - (value.rfind(b"\n", 0, exc.start) + 1) + 1
        raise RequestError(BAD_REQUEST, f"{what} is not valid UTF-8: byte 0x"
                           f"{value[exc.start]:02x} at line {line}, column {column} "
                           f"({exc.reason}).") from None


def _pairs(raw: bytes, where: str) -> dict[str, str]:
    """The ``name=value&...`` pairs of ``raw`` (percent-escapes and ``+`` decoded)."""
    params = {}
    for pair in raw.split(b"&"):
        if not pair:
            continue
        name, _, value = (unquote_to_bytes(part.replace(b"+", b" "))
                          for part in pair.partition(b"="))
        key = utf8(name, f"A parameter name in the {where}")
        params[key] = utf8(value, f"The parameter '{key}'")
    return params


def query_params(query: bytes) -> dict[str, str]:
    """The parameters of a URL's query string (its raw bytes)."""
    return _pairs(query, "query string")


def body_params(content_type: str, body: bytes) -> dict[str, str]:
    """The parameters of a request body of ``content_type``; an empty body has none.
    RequestError (400) for another content type or a malformed multipart body."""
    media = content_type.partition(";")[0].strip().lower()
    if not body and media not in (FORM, MULTIPART):
        return {}
    if media == FORM:
        return _pairs(body, "body")
    if media == MULTIPART:
        return _multipart(content_type, body)
    raise RequestError(BAD_REQUEST, f"Unsupported payload Content-Type '{content_type or '<none>'}'"
                       f": send the parameters as {FORM} or {MULTIPART}.")


def _multipart(content_type: str, body: bytes) -> dict[str, str]:
    """The named parts of a ``multipart/form-data`` body (a file part's content too)."""
    header = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + body)
    if not message.is_multipart() or message.defects:
        raise RequestError(BAD_REQUEST, "Cannot parse the multipart/form-data payload "
                           f"({'; '.join(str(d) for d in message.defects) or 'no parts'}).")
    params = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            continue
        payload = part.get_payload(decode=True)
        params[name] = utf8(payload if isinstance(payload, bytes) else b"",
                            f"The parameter '{name}'")
    return params
