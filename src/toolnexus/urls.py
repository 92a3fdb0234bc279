"""URL safety: what a URL a server sends really points at, read the way a browser reads it.

A server in URL mode asks the user to open a URL. What matters is where a browser goes, and
that is not always what the text seems to say: the WHATWG URL standard that browsers follow
strips control characters and spaces around a URL, removes every tab and line break inside
it, and in an ``http(s)`` URL reads ``\\`` as ``/``. So ``https://evil.example\\@bank.example/``
opens ``evil.example``, though ``urllib.parse.urlsplit`` reads ``bank.example``.

- [`read_url`][toolnexus.urls.read_url] reads a URL as a browser does: its scheme, host and
  port, whether it carries a user name or password, and what the browser reads differently
  from the text; [`UrlReading.plain`][toolnexus.urls.UrlReading.plain] says whether the text
  means what it shows.
- [`browser_host`][toolnexus.urls.browser_host]: the host (and port) a browser opens.
- [`url_warnings`][toolnexus.urls.url_warnings]: what is suspicious about it, one sentence each.

The console, the inbox and the policy's ``url_host`` rule all read URLs here. Pure: standard
library only, nothing is fetched, no name is resolved.

```python
from toolnexus.urls import browser_host, read_url

reading = read_url("https://evil.example\\\\@bank.example/")
assert reading.host == "evil.example" and not reading.plain
assert browser_host("https://bank.example:8443/login") == "bank.example:8443"
```
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ._errors import ToolnexusError
from ._util import escape_text

__all__ = ["UrlError", "UrlReading", "browser_host", "read_url", "url_warnings"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# What browsers strip around a URL and remove inside it (WHATWG URL standard).
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_SPECIAL = frozenset({"http", "https"})


class UrlError(ToolnexusError, ValueError):
    """A URL that cannot be parsed (a port that is not a number, a malformed IPv6 host)."""


@dataclass(frozen=True, slots=True)
class UrlReading:
    """A URL as a browser reads it, made by [`read_url`][toolnexus.urls.read_url]."""

    text: str
    """The URL as given."""
    read: str
    """The URL as a browser reads it (for ``http(s)``; any other URL as given)."""
    scheme: str
    """The scheme, lower case; ``""`` when there is none."""
    host: str
    """The host a browser goes to: lower case, percent-decoded, an IPv6 address without its
    brackets; ``""`` when there is none."""
    port: int | None
    """The port, when the URL names one."""
    has_userinfo: bool
    """The URL carries a user name or password before ``@`` (``https://bank.example@evil.example``
    goes to ``evil.example``)."""
    changes: tuple[str, ...]
    """What a browser reads differently from the text, one phrase each (empty when nothing)."""
    encoded_host: bool
    """The host is percent-encoded in the text."""

    @property
    def plain(self) -> bool:
        """Whether the text means what it shows: nothing a browser reads differently, no user
        name or password, no control, format or separator character anywhere, a host that is
        not percent-encoded. Only a plain URL may match an allow-list (a policy's ``url_host``)."""
        return (
            not self.changes
            and not self.has_userinfo
            and not self.encoded_host
            and self.text.isprintable()
            and " " not in self.text
        )


def _as_browser_reads(url: str) -> tuple[str, list[str]]:
    """The URL as a browser reads it, and what it changed, for an ``http(s)`` URL; any other
    URL as it is."""
    stripped = url.strip(_C0_AND_SPACE)
    cleaned = _TAB_OR_NEWLINE.sub("", stripped)
    match = _SCHEME.match(cleaned)
    if match is None or match.group(1).lower() not in _SPECIAL:
        return url, []
    changes: list[str] = []
    if stripped != url:
        changes.append("spaces or control characters around it")
    if cleaned != stripped:
        changes.append("tabs or line breaks, which browsers remove")
    read = cleaned.replace("\\", "/")
    if read != cleaned:
        changes.append("a backslash, which browsers read as '/'")
    rest = read[match.end() :]
    if not rest.startswith("//") or rest.startswith("///"):
        changes.append("an unusual number of slashes after the scheme")
    return f"{match.group(1)}://{rest.lstrip('/')}", changes


def read_url(url: str) -> UrlReading:
    """Read ``url`` as a browser would; [`UrlError`][toolnexus.urls.UrlError] (a ``ValueError``)
    when it cannot be parsed, ``TypeError`` when it is not a string."""
    if not isinstance(url, str):
        raise TypeError(f"read_url: url must be a str, not {type(url).__name__}")
    read, changes = _as_browser_reads(url)
    try:
        parts = urlsplit(read)
        port = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        raise UrlError("the URL cannot be parsed") from None
    raw_host = parts.hostname or ""
    return UrlReading(
        text=url,
        read=read,
        scheme=parts.scheme.lower(),
        host=unquote(raw_host),
        port=port,
        has_userinfo=parts.username is not None or parts.password is not None,
        changes=tuple(changes),
        encoded_host="%" in raw_host,
    )


def browser_host(url: str) -> str:
    """The host a browser opens for ``url``, with ``:port`` when the URL names one; ``""``
    when it has none or cannot be parsed. Server text: escape it before it reaches a terminal."""
    try:
        reading = read_url(url)
    except UrlError:
        return ""
    return reading.host + (f":{reading.port}" if reading.port is not None else "")


def _is_local(host: str) -> bool:
    """A loopback address (``127.0.0.0/8``, ``::1``) or a ``localhost`` name."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")


def url_warnings(url: str) -> list[str]:
    """What is suspicious about a URL a server asks the user to open, one sentence each.

    The URL is read as a browser reads it ([`read_url`][toolnexus.urls.read_url]: ``\\`` as
    ``/``, tabs and line breaks removed), and that is warned about too. Warns when the scheme
    is not ``https`` (``http`` to ``localhost`` or a loopback address excepted), when the host
    is punycode (``xn--``), percent-encoded or not ASCII (it may imitate another name), when
    the URL carries a user name or password (``https://bank.com@evil.example`` goes to
    ``evil.example``), when it has no host, and when it cannot be parsed. An empty list when
    nothing is suspicious. Nothing is fetched. Server text in a warning is escaped.
    """
    try:
        reading = read_url(url)
    except UrlError:
        return ["the URL cannot be parsed: do not open it"]
    host = reading.host
    warnings: list[str] = []
    if reading.changes:
        warnings.append(
            f"the URL has {' and '.join(reading.changes)}: a browser goes to the host shown above, "
            "which is not what the text seems to say"
        )
    scheme = reading.scheme
    if scheme == "http":
        if not _is_local(host):
            warnings.append("the URL is not https: what you send there can be read or changed on the way")
    elif not scheme:
        warnings.append("the URL has no scheme: it is not a web address")
    elif scheme != "https":
        warnings.append(
            f"the URL's scheme is {escape_text(scheme)!r}, not https: it may not be a web page at all"
        )
    if not host:
        warnings.append("the URL has no host")
    elif reading.encoded_host:
        warnings.append(
            f"the host is percent-encoded (it reads as {escape_text(host)!r}): it may imitate another name"
        )
    elif not host.isascii():
        warnings.append("the host has characters that are not ASCII: it may imitate another name")
    elif any(label.startswith("xn--") for label in host.split(".")):
        try:
            decoded = host.encode("ascii").decode("idna")
        except UnicodeError:
            decoded = ""
        shown = f" (it reads as {escape_text(decoded)!r})" if decoded and decoded != host else ""
        warnings.append(f"the host is punycode{shown}: it may imitate another name")
    if reading.has_userinfo:
        warnings.append(
            "the URL carries a user name or password before '@': the real host is the one shown above"
        )
    return warnings
