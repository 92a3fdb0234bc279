"""toolnexus.urls: URLs read as a browser reads them, and the warnings the console and the inbox show."""

from __future__ import annotations

import warnings

import pytest

from toolnexus.urls import UrlError, browser_host, read_url, url_warnings


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


def test_the_console_keeps_url_warnings_as_a_deprecated_alias() -> None:
    import toolnexus.console

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        alias = toolnexus.console.url_warnings
    assert alias is url_warnings
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    with pytest.raises(AttributeError):
        _ = toolnexus.console.no_such_name


def test_moved_names_keep_working_from_their_old_homes() -> None:
    import toolnexus
    import toolnexus.forms
    import toolnexus.mcp

    assert toolnexus.sensitive_fields is toolnexus.forms.sensitive_fields
    assert toolnexus.validate_content is toolnexus.forms.validate_content
    for name in ("sensitive_fields", "validate_content"):
        assert name not in toolnexus.mcp.__all__
        with pytest.warns(DeprecationWarning, match=f"toolnexus.mcp.{name} is deprecated"):
            assert getattr(toolnexus.mcp, name) is getattr(toolnexus.forms, name)
    assert toolnexus.mcp.call_tool is toolnexus.mcp.call_tool_resolving_urls
    assert {"call_tool", "call_tool_resolving_urls"} <= set(toolnexus.mcp.__all__)
