"""URL safety: what a URL a server sends really points at, read the way a browser reads it.

A server in URL mode asks the user to open a URL. What matters is where a browser goes, and
that is not always what the text seems to say: the WHATWG URL standard that browsers follow
strips control characters and spaces around a URL, removes every tab and line break inside
it, and in an ``http(s)`` URL reads ``\\`` as ``/``. So ``https://evil.example\\@bank.example/``
opens ``evil.example``, though ``urllib.parse.urlsplit`` reads ``bank.example``. The host
itself is read by the standard's host parser too: percent-decoded, mapped by IDNA (UTS #46:
``ｂａｎｋ。example`` is ``bank.example``, ``bücher.example`` is ``xn--bcher-kva.example``), and
a host that ends in a number read as an IPv4 address in decimal, octal or hexadecimal, whole
or in parts (``0x7f.1`` and ``2130706433`` are ``127.0.0.1``).

- [`read_url`][toolnexus.urls.read_url] reads a URL as a browser does: its scheme, host and
  port, whether it carries a user name or password, and what the browser reads differently
  from the text; [`UrlReading.plain`][toolnexus.urls.UrlReading.plain] says whether the text
  means what it shows.
- [`browser_host`][toolnexus.urls.browser_host]: the host (and port) a browser opens.
- [`url_warnings`][toolnexus.urls.url_warnings]: what is suspicious about it, one sentence each.

The console, the inbox and the policy's ``url_host`` rule all read URLs here. Pure: nothing
is fetched, no name is resolved. The host of an ``http``, ``https``, ``ws``, ``wss`` or ``ftp``
URL is read by [ada](https://www.ada-url.com/) (``ada-url``), the WHATWG URL parser of
Node.js: it agrees with Chromium's ``new URL()`` on the test corpus (tests/test_urls_browser.py),
and a hand-written reading on the standard library alone could not (it has no UTS #46 table,
and its Unicode data is the Python's).

```python
from toolnexus.urls import browser_host, read_url

reading = read_url("https://evil.example\\\\@bank.example/")
assert reading.host == "evil.example" and not reading.plain
assert browser_host("https://bank.example:8443/login") == "bank.example:8443"
assert browser_host("https://0x7f.1/") == "127.0.0.1"  # a number, read as an address
assert not read_url("https://0x7f.1/").plain
```
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import ada_url

from ._util import escape_text
from .errors import UrlError

__all__ = ["UrlReading", "browser_host", "read_url", "url_warnings"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# What browsers strip around a URL and remove inside it (WHATWG URL standard).
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
# The special schemes whose host is a domain or an IP address, with their default ports
# (``file``, special too, has hosts of its own kind: it is read as any other URL).
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_SPECIAL = frozenset(_DEFAULT_PORTS)


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
    """The host a browser goes to, as the WHATWG URL standard reads it: lower case,
    percent-decoded, an international name in punycode (``xn--bcher-kva.example``), an IPv4
    address in dotted decimal, an IPv6 address compressed and without its brackets; ``""``
    when there is none."""
    port: int | None
    """The port, when the URL names one (the scheme's default too)."""
    has_userinfo: bool
    """The URL carries a user name or password before ``@`` (``https://bank.example@evil.example``
    goes to ``evil.example``)."""
    changes: tuple[str, ...]
    """What a browser reads differently from the text, one phrase each (empty when nothing)."""
    encoded_host: bool
    """The host is percent-encoded in the text."""
    written_host: str
    """The host as the text writes it: percent-decoded, in lower case, an IPv6 address without
    its brackets. When a browser reads it as another host than [`host`][toolnexus.urls.UrlReading.host]
    (``0x7f.1`` for ``127.0.0.1``, ``ｂａｎｋ.example`` for ``bank.example``), that is one of the
    [`changes`][toolnexus.urls.UrlReading.changes]; an international name and its punycode,
    or one IPv6 address written two ways, are one host."""

    @property
    def plain(self) -> bool:
        """Whether the text means what it shows: nothing a browser reads differently (the
        host included), no user name or password, no control, format or separator character
        anywhere, a host that is not percent-encoded, and a host at all in an ``http(s)`` URL.
        Only a plain URL may match an allow-list (a policy's ``url_host``)."""
        return (
            not self.changes
            and not self.has_userinfo
            and not self.encoded_host
            and self.text.isprintable()
            and " " not in self.text
            and (bool(self.host) or self.scheme not in _SPECIAL)
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


def _authority(read: str) -> tuple[bool, str, str]:
    """Whether the authority of ``read`` (a special URL as a browser reads it,
    ``scheme://...``) has a user name or password, and its host and port as written (the
    standard's split: the last ``@``, then the first ``:`` outside brackets)."""
    rest = read.partition("://")[2]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    _, at, host_and_port = authority.rpartition("@")
    depth = 0
    for index, ch in enumerate(host_and_port):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == ":" and depth == 0:
            return bool(at), host_and_port[:index], host_and_port[index + 1 :]
    return bool(at), host_and_port, ""


def _host_change(written: str, host: str, ipv4: bool) -> str | None:
    """What a browser reads in the host other than the text shows (``None``: the same host)."""
    if written == host:
        return None
    if ipv4:
        return (
            f"a host written as a number in an unusual form, which browsers read as the IPv4 address {host}"
        )
    if ":" in host:
        try:
            if ipaddress.IPv6Address(written) == ipaddress.IPv6Address(host):
                return None  # one address, written two ways
        except ValueError:
            pass
    elif not written.isascii() and ada_url.idna_to_unicode(host) == written:
        return None  # an international name and its punycode
    return f"a host that browsers read as {host!r}"


def read_url(url: str) -> UrlReading:
    """Read ``url`` as a browser would; [`UrlError`][toolnexus.errors.UrlError] (a ``ValueError``)
    when it cannot be parsed (a browser would open nothing), ``TypeError`` when it is not a string.
    A URL with no host at all (``https://``) reads, with ``host`` empty."""
    if not isinstance(url, str):
        raise TypeError(f"read_url: url must be a str, not {type(url).__name__}")
    read, changes = _as_browser_reads(url)
    scheme = _SCHEME.match(read)
    if scheme is None or scheme.group(1).lower() not in _SPECIAL:
        return _read_other(url, read, changes)
    has_userinfo, host_text, port_text = _authority(read)
    written = unquote(host_text).lower()
    if written.startswith("[") and written.endswith("]"):
        written = written[1:-1]
    host, ipv4 = "", False
    if host_text:
        try:
            parsed = ada_url.parse_url(url, attributes=("hostname", "host_type"))
            port = int(port_text) if port_text else None
        except ValueError:
            raise UrlError("the URL cannot be parsed") from None
        host, ipv4 = parsed["hostname"].strip("[]"), parsed["host_type"] == ada_url.HostType.IPV4
        change = _host_change(written, host, ipv4)
        if change is not None:
            changes.append(change)
    else:
        port = int(port_text) if port_text.isascii() and port_text.isdigit() else None
    return UrlReading(
        text=url,
        read=read,
        scheme=scheme.group(1).lower(),
        host=host,
        port=port,
        has_userinfo=has_userinfo,
        changes=tuple(changes),
        encoded_host="%" in host_text,
        written_host=written,
    )


def _read_other(url: str, read: str, changes: list[str]) -> UrlReading:
    """A URL of any other scheme (or none), split as ``urllib.parse`` splits it."""
    try:
        parts = urlsplit(read)
        port = parts.port  # raises ValueError for a port that is not a number
    except ValueError:
        raise UrlError("the URL cannot be parsed") from None
    raw_host = parts.hostname or ""
    host = unquote(raw_host)
    return UrlReading(
        text=url,
        read=read,
        scheme=parts.scheme.lower(),
        host=host,
        port=port,
        has_userinfo=parts.username is not None or parts.password is not None,
        changes=tuple(changes),
        encoded_host="%" in raw_host,
        written_host=host,
    )


def browser_host(url: str) -> str:
    """The host a browser opens for ``url``, as its address bar's ``URL.host`` gives it:
    with ``:port`` when the URL names one other than the scheme's default, an IPv6 address
    in brackets; ``""`` when it has none or cannot be parsed. Server text: escape it before
    it reaches a terminal."""
    try:
        reading = read_url(url)
    except UrlError:
        return ""
    host = reading.host
    if not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    port = reading.port
    if port is None or port == _DEFAULT_PORTS.get(reading.scheme):
        return host
    return f"{host}:{port}"


def _is_local(host: str) -> bool:
    """A loopback address (``127.0.0.0/8``, ``::1``) or a ``localhost`` name."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost" or host.endswith(".localhost")


def url_warnings(url: str) -> list[str]:
    """What is suspicious about a URL a server asks the user to open, one sentence each.

    The URL is read as a browser reads it ([`read_url`][toolnexus.urls.read_url]: ``\\`` as
    ``/``, tabs and line breaks removed, the host read by the standard's host parser), and
    what a browser reads otherwise than the text shows is warned about too (``0x7f.1`` is the
    IPv4 address ``127.0.0.1``, ``ｂａｎｋ。example`` is ``bank.example``). Warns when the scheme
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
        changes = escape_text(" and ".join(reading.changes))
        warnings.append(
            f"the URL has {changes}: a browser goes to the host shown above, "
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
    elif not reading.written_host.isascii():
        warnings.append("the host has characters that are not ASCII: it may imitate another name")
    elif any(label.startswith("xn--") for label in host.split(".")):
        decoded = ada_url.idna_to_unicode(host) if host.isascii() else ""
        shown = f" (it reads as {escape_text(decoded)!r})" if decoded and decoded != host else ""
        warnings.append(f"the host is punycode{shown}: it may imitate another name")
    if reading.has_userinfo:
        warnings.append(
            "the URL carries a user name or password before '@': the real host is the one shown above"
        )
    return warnings
