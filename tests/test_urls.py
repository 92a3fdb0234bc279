"""toolnexus.urls: URLs read as a browser reads them, and the warnings the console and the inbox show."""

from __future__ import annotations

import pytest

from toolnexus.errors import UrlError
from toolnexus.urls import browser_host, read_url, url_warnings


@pytest.mark.parametrize(
    ("url", "host", "plain"),
    [
        ("https://bank.example/login", "bank.example", True),
        ("https://BANK.Example:8443/", "bank.example", True),
        ("https://evil.example\\@bank.example/", "evil.example", False),
        # the tab goes, leaving a user name in front of bank.example: not plain either way
        ("https://evil.example\t@bank.example/", "bank.example", False),
        ("https://evil.example\r\n@bank.example/", "bank.example", False),
        ("https://bank.example@evil.example/", "evil.example", False),
        ("\x00https://bank.example/", "bank.example", False),
        ("https:///bank.example/", "bank.example", False),
        ("https://bank%2eexample/", "bank.example", False),
        ("http://[::1]:8080/cb", "::1", True),
        ("mailto:someone@bank.example", "", True),
    ],
)
def test_read_url_gives_the_host_a_browser_opens(url: str, host: str, plain: bool) -> None:
    reading = read_url(url)
    assert reading.host == host
    assert reading.plain is plain


def test_browser_host_and_unparseable_urls() -> None:
    assert browser_host("https://bank.example:8443/x") == "bank.example:8443"
    assert browser_host("https://evil.example\\@bank.example/") == "evil.example"
    assert browser_host("https://[::1/") == ""
    with pytest.raises(UrlError):
        read_url("https://bank.example:port/")
    with pytest.raises(ValueError, match="cannot be parsed"):
        read_url("https://[::1/")
    with pytest.raises(TypeError, match="read_url: url must be a str"):
        read_url(b"https://bank.example/")  # type: ignore[arg-type]
    assert url_warnings("https://bank.example:port/") == ["the URL cannot be parsed: do not open it"]


def test_each_name_has_one_home_and_no_alias_of_an_unpublished_name() -> None:
    """No shim for a name that was never published (0.1.0 is the first release)."""
    import toolnexus
    import toolnexus.console
    import toolnexus.durable
    import toolnexus.forms
    import toolnexus.mcp

    assert toolnexus.sensitive_fields is toolnexus.forms.sensitive_fields
    assert toolnexus.validate_content is toolnexus.forms.validate_content
    for module, name in [
        (toolnexus.mcp, "sensitive_fields"),
        (toolnexus.mcp, "validate_content"),
        (toolnexus.mcp, "call_tool"),
        (toolnexus.durable, "call_tool"),
        (toolnexus.console, "url_warnings"),
    ]:
        assert name not in getattr(module, "__all__", ())
        assert not hasattr(module, name), f"{module.__name__}.{name}"


@pytest.mark.parametrize(
    ("url", "host", "written"),
    [
        # IPv4 in hexadecimal, as one number (a "dword"), in octal, in short forms
        ("https://0x7f.1/", "127.0.0.1", "0x7f.1"),
        ("https://2130706433/", "127.0.0.1", "2130706433"),
        ("https://0177.0.0.1/", "127.0.0.1", "0177.0.0.1"),
        ("https://10.1/", "10.0.0.1", "10.1"),
        ("https://0xa9fea9fe/", "169.254.169.254", "0xa9fea9fe"),
        ("https://%30x7f.1/", "127.0.0.1", "0x7f.1"),
        ("https://127.0.0.1./", "127.0.0.1", "127.0.0.1."),
        ("https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "127.0.0.1", "１２７.０.０.１"),
        # the full stops and letters IDNA maps to ASCII, and what it drops
        ("https://bank\u3002example/", "bank.example", "bank\u3002example"),
        ("https://bank\uff0eexample/", "bank.example", "bank\uff0eexample"),
        ("https://bank\uff61example/", "bank.example", "bank\uff61example"),
        ("https://\uff42\uff41\uff4e\uff4b.example/", "bank.example", "ｂａｎｋ.example"),
        ("https://exa\u00admple.com/", "example.com", "exa\u00admple.com"),
        ("https://\ufb01le.example/", "file.example", "\ufb01le.example"),
    ],
)
def test_a_host_a_browser_reads_otherwise_is_read_so_and_is_not_plain(
    url: str, host: str, written: str
) -> None:
    reading = read_url(url)
    assert (reading.host, reading.written_host) == (host, written)
    assert not reading.plain
    assert browser_host(url) == host
    warned = url_warnings(url)[0]
    assert repr(host) in warned or f"the IPv4 address {host}:" in warned
    if written.isascii() and "%" not in url:
        # one sentence, naming the address a browser opens
        assert warned == (
            "the URL has a host written as a number in an unusual form, which browsers read as the "
            f"IPv4 address {host}: a browser goes to the host shown above, which is not what the "
            "text seems to say"
        )


@pytest.mark.parametrize(
    "url",
    [
        "https://256.0.0.1/",
        "https://1.2.3.4.5/",
        "https://09.1/",
        "https://example.1/",
        "https://a<b/",
        "https://a^b/",
        "https://%E2%80%AEevil.example/",
        "https://ex%00ample.com/",
        "https://bank.example%40evil.example/",
        "https://[fe80::1%25eth0]/",
        "https://[::1]x/",
        "https://a\u2024b/",
        "https://\u05d0a.example/",
        "https://bank.example:65536/",
        "https://bank.example:+443/",
    ],
)
def test_a_host_a_browser_refuses_cannot_be_parsed(url: str) -> None:
    with pytest.raises(UrlError, match="cannot be parsed"):
        read_url(url)
    assert browser_host(url) == ""
    assert url_warnings(url) == ["the URL cannot be parsed: do not open it"]


@pytest.mark.parametrize(
    ("url", "host", "shown", "plain"),
    [
        # an international name is its punycode: one host, written two ways
        ("https://b\u00fccher.example/", "xn--bcher-kva.example", "xn--bcher-kva.example", True),
        ("https://B\u00dcCHER.example/", "xn--bcher-kva.example", "xn--bcher-kva.example", True),
        ("https://fa\u00df.de/", "xn--fa-hia.de", "xn--fa-hia.de", True),
        ("https://\u0430pple.example/", "xn--pple-43d.example", "xn--pple-43d.example", True),
        # one IPv6 address, written two ways; browser_host brackets it and drops a default port
        ("https://[0:0:0:0:0:0:0:1]:443/", "::1", "[::1]", True),
        ("http://[::ffff:127.0.0.1]:8080/", "::ffff:7f00:1", "[::ffff:7f00:1]:8080", True),
        ("http://bank.example:80/", "bank.example", "bank.example", True),
        ("https://bank.example:80/", "bank.example", "bank.example:80", True),
        ("wss://bank.example:443/", "bank.example", "bank.example", True),
        ("ftp://0x7f.1/", "127.0.0.1", "127.0.0.1", False),
        # no host: nothing a browser opens
        ("https://", "", "", False),
        ("https://:443/", "", "", False),
    ],
)
def test_browser_host_is_the_address_bars_host(url: str, host: str, shown: str, plain: bool) -> None:
    reading = read_url(url)
    assert reading.host == host
    assert browser_host(url) == shown
    assert reading.plain is plain


def test_an_international_name_is_warned_about_as_before() -> None:
    assert url_warnings("https://b\u00fccher.example/") == [
        "the host has characters that are not ASCII: it may imitate another name"
    ]
    assert url_warnings("https://xn--pple-43d.com/") == [
        "the host is punycode (it reads as 'аpple.com'): it may imitate another name"
    ]
    assert url_warnings("https://bank\u3002example/") == [
        "the URL has a host that browsers read as 'bank.example': a browser goes to the host shown "
        "above, which is not what the text seems to say",
        "the host has characters that are not ASCII: it may imitate another name",
    ]


@pytest.mark.parametrize(
    ("rule_host", "url"),
    [
        ("127.0.0.1", "https://0x7f.1/"),
        ("127.0.0.1", "https://2130706433/"),
        ("10.0.0.1", "https://10.1/"),
        ("169.254.169.254", "https://0xa9fea9fe/"),
        ("bank.example", "https://bank\u3002example/"),
        ("bank.example", "https://\uff42\uff41\uff4e\uff4b.example/"),
        ("example.com", "https://exa\u00admple.com/"),
    ],
)
def test_a_policys_url_host_matches_only_the_host_as_written(rule_host: str, url: str) -> None:
    """The policy's ``url_host`` reads URLs here: an allow-listed address written in a form a
    browser reads otherwise is not matched (the host it shows is not the host it names)."""
    from toolnexus.policy import Policy
    from toolnexus.testing import url_request

    policy = Policy([{"url_host": rule_host, "action": "accept"}])
    assert policy.decide(url_request(url))[0] is None  # no rule matched
    plainly = url.replace(url.split("/")[2], rule_host)
    assert policy.decide(url_request(plainly))[0] == 0
