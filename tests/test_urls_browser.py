"""toolnexus.urls against a real browser: every URL of the corpus below read by Chromium's own
``new URL()`` (Debian's Chromium, driven by Playwright: tests/support/browser.py), and by
``browser_host`` and ``read_url``.

- Chromium parses the URL: ``browser_host`` gives Chromium's ``URL.host`` exactly, and a
  URL ``read_url`` calls plain has a host that, written as the text writes it, Chromium
  reads as that same host (what it shows is where it goes).
- Chromium refuses the URL: ``read_url`` refuses it too (``UrlError``) or reads it as not
  plain (``https://`` reads, with no host).
- [DEVIATIONS][]: where Chromium departs from the URL standard, and ``read_url`` keeps to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from support.browser import browser
from toolnexus.errors import UrlError
from toolnexus.urls import browser_host, read_url

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["browser"]  # Chromium, a fixture (the module's tests are e2e by it)

CORPUS = [
    # the nine of the attack run: IPv4 in hex, dword, octal and short forms, IDNA full stops
    # and fullwidth letters
    "https://0x7f.1/",
    "https://2130706433/",
    "https://0177.0.0.1/",
    "https://10.1/",
    "https://0xa9fea9fe/",
    "https://bank\u3002example/",
    "https://bank\uff0eexample/",
    "https://bank\uff61example/",
    "https://\uff42\uff41\uff4e\uff4b.example/",
    # more IPv4: short, mixed, trailing dots, out of range, a host that ends in a number
    "https://127.1/",
    "https://0x7f000001/",
    "https://0X7F.0.0.1/",
    "https://127.0.0.1./",
    "https://127.0.0.1../",
    "https://1.2.3.4.5/",
    "https://256.0.0.1/",
    "https://4294967296/",
    "https://4294967295/",
    "https://0x/",
    "https://0/",
    "https://09.1/",
    "https://1.2.3.08/",
    "https://example.1/",
    "https://example.0x1/",
    "https://1.example/",
    "https://%30x7f.1/",
    "https://1.65536/",
    "https://0x100.0.0/",
    "https://1..2/",
    "https://0x1.0x2.0x3.0x4/",
    "https://0x7f\u30021/",
    "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",
    "https://\uff10\uff58\uff17\uff46\uff0e\uff11/",
    "https://192.168.0.1/",
    "https://0.0.0.0/",
    "https://\u00fc.0x7f.1/",
    "https://\u00fc.1/",
    # IPv6
    "http://[::1]:8080/cb",
    "https://[0:0:0:0:0:0:0:1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::127.0.0.1]/",
    "https://[2001:DB8::1]/",
    "https://[2001:db8:0:0:1:0:0:1]/",
    "https://[::]/",
    "https://[::1/",
    "https://[fe80::1%25eth0]/",
    "https://[1:2:3:4:5:6:7:8:9]/",
    "https://[::1]x/",
    "https://[1.2.3.4]/",
    # userinfo
    "https://bank.example@evil.example/",
    "https://user:pass@evil.example:8443/",
    "https://evil.example\\@bank.example/",
    "https://bank.example%40evil.example/",
    "https://@evil.example/",
    "https://a@b@evil.example/",
    "https://bank.example:443@evil.example/",
    "https://evil.example%2F@bank.example/",
    "https://example.com#@evil.example/",
    "https://example.com?@evil.example/",
    # slashes and backslashes
    "https:\\\\evil.example\\x",
    "HTTPS:\\\\evil.example\\x",
    "https:/\\evil.example/",
    "https:evil.example/",
    "https:///evil.example/",
    "https:////evil.example/",
    # tabs, line breaks, spaces and controls
    "https://ev\til.example/",
    "https://evil.exam\nple/",
    "https://evil\r\n.example/",
    "https://evil.example\t@bank.example/",
    " \x00https://evil.example/ \x1f",
    "https://bank.example:4\t43/",
    # percent-encoded hosts
    "https://bank%2eexample/",
    "https://bank%2Eexample.com/",
    "https://%62ank.example/",
    "https://ex%41mple.com/",
    "https://%E2%80%AEevil.example/",
    "https://%zz.example/",
    "https://ex%00ample.com/",
    "https://%ef%bc%8e.example/",
    "https://%2e/",
    "https://bank.example%2f/",
    "https://%C3%BC.example/",
    "https://%FF.example/",
    # IDNA (UTS #46) and punycode
    "https://b\u00fccher.example/",
    "https://xn--bcher-kva.example/",
    "https://B\u00dcCHER.example/",
    "https://xn--BCHER-KVA.example/",
    "https://fa\u00df.de/",
    "https://\u1e9e.example/",
    "https://\u03c2.example/",
    "https://xn--/",
    "https://xn--a.example/",
    "https://xn--ls8h.example/",
    "https://\U0001f4a9.example/",
    "https://xn--m\u00fcnchen.example/",
    "https://\u00fc.xn--a/",
    "https://\u0430pple.example/",
    "https://\u0299ank.example/",
    "https://exa\u00admple.com/",
    "https://example.com\u200b/",
    "https://a\u2060b.example/",
    "https://\ufb01le.example/",
    "https://\u210c.example/",
    "https://\u2460.example/",
    "https://\u2160.example/",
    "https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45\u3002\uff43\uff4f\uff4d/",
    "https://a\uff0eb\u3002c\uff61d/",
    "https://a\u2024b/",
    "https://\u2488x.example/",
    "https://\ufe52x.example/",
    "https://\uff0fx.example/",
    "https://\u3164.example/",
    "https://\u05d0a.example/",
    "https://\u05d0\u05d1.example/",
    "https://1\u05d0.example/",
    "https://a\u200db.example/",
    "https://\u0915\u094d\u200d\u0937.example/",
    "https://\u0300a.example/",
    "https://\ue000.example/",
    # ASCII hosts a browser keeps as they are
    "https://a_b.example/",
    "https://-x-.example/",
    "https://ab--cd.example/",
    "https://a;b/",
    # forbidden code points
    "https://a<b/",
    "https://a^b/",
    "https://a|b/",
    "https://a%b/",
    "https://a\x7fb/",
    # trailing dots
    "https://bank.example./",
    "https://bank.example../",
    "https://./",
    # ports
    "https://bank.example:443/",
    "http://bank.example:80/",
    "https://bank.example:80/",
    "https://bank.example:08443/",
    "https://bank.example:65535/",
    "https://bank.example:65536/",
    "https://bank.example:/",
    "https://bank.example:port/",
    "https://bank.example:+443/",
    "https://bank.example:\uff14\uff14\uff13/",
    "http://localhost:8080/",
    # case
    "HTTPS://BANK.EXAMPLE/",
    "https://Bank.Example:8443/",
    "hTtP://Bank.Example/",
    # no host; other schemes
    "https:///",
    "https://",
    "https://:443/",
    "https://user@/",
    "mailto:someone@bank.example",
    "javascript:alert(1)//evil.example",
    "wss://evil.example/",
    "ws://evil.example:80/",
    "ftp://0x7f.1/",
    # dots and slashes in the path, not the host
    "https://bank.example/%2e%2e/%2F%2Fevil.example",
    "https://bank.example/..\\..\\evil.example",
]
"""URLs a server may send, with hosts written every way a browser reads otherwise than they look."""

DEVIATIONS = {
    "https://a b.example/": "a%20b.example",
    "https://a\u3000b.example/": "a%20b.example",
    "https://\u00a0a.example/": "%20a.example",
}
"""Where Chromium departs from the URL standard: it escapes a space in a host (an ideographic
or no-break space once IDNA maps it to one) where the standard refuses the URL (as Firefox and
ada do). ``read_url`` refuses them; Chromium's host, for the record."""

HOSTS = """urls => urls.map(url => {
  try {
    const read = new URL(url);
    return {host: read.host, hostname: read.hostname};
  } catch (error) {
    return null;
  }
})"""


def chromium_reads(browser: Browser, urls: list[str]) -> list[dict[str, str] | None]:
    """Chromium's ``URL.host`` and ``URL.hostname`` for each URL; ``None`` where it refuses it."""
    context = browser.new_context()
    try:
        read: list[Any] = context.new_page().evaluate(HOSTS, urls)
    finally:
        context.close()
    return read


def test_the_corpus_is_large_and_has_no_repeats() -> None:
    assert len(CORPUS) >= 60
    assert len(set(CORPUS)) == len(CORPUS)
    assert not set(CORPUS) & set(DEVIATIONS)


def test_browser_host_is_chromiums_host(browser: Browser) -> None:
    urls = CORPUS + list(DEVIATIONS)
    read = dict(zip(urls, chromium_reads(browser, urls), strict=True))
    wrong: list[str] = []
    shown: dict[str, str] = {}  # a plain URL's host as its text writes it, to be read by Chromium
    for url in CORPUS:
        chromium = read[url]
        try:
            reading = read_url(url)
        except UrlError:
            if chromium is not None:
                wrong.append(f"{url!r}: Chromium opens {chromium['host']!r}, read_url refuses it")
            continue
        if chromium is None:
            if reading.plain:
                wrong.append(f"{url!r}: Chromium refuses it, read_url reads it as plain")
            continue
        if browser_host(url) != chromium["host"]:
            wrong.append(f"{url!r}: Chromium opens {chromium['host']!r}, browser_host {browser_host(url)!r}")
        if reading.plain and reading.scheme in ("http", "https"):
            written = reading.written_host
            shown[url] = f"https://[{written}]/" if ":" in written else f"https://{written}/"
    for url, escaped in DEVIATIONS.items():
        deviating = read[url]
        assert deviating is not None
        assert deviating["host"] == escaped
        with pytest.raises(UrlError):
            read_url(url)
    # What a plain URL shows is where it goes: its host as written is Chromium's host.
    again = chromium_reads(browser, list(shown.values()))
    for url, as_written in zip(shown, again, strict=True):
        chromium = read[url]
        assert chromium is not None
        if as_written is None or as_written["hostname"] != chromium["hostname"]:
            wrong.append(f"{url!r} is plain, but its host as written reads as {as_written!r}")
    assert not wrong, "\n".join(wrong)
    assert len(shown) >= 20  # the check above is not vacuous
