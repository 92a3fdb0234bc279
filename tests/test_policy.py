"""toolnexus.policy.Policy: rules, their guards, files, and a real server in both eras."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from toolnexus import Answer, Request
from toolnexus.policy import Policy
from toolnexus.testing import elicit_through_server, form_request, url_request

DEPLOY = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "enum": ["eu-west-1", "us-east-1"]},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2},
        "notify": {"type": "boolean"},
    },
    "required": ["region"],
}
SECRET = {"type": "object", "properties": {"api_key": {"type": "string"}}, "required": ["api_key"]}
CANCEL = {"ok": False, "data": None, "reason": "cancelled"}


def outcome(answer: Any) -> dict[str, Any]:
    assert isinstance(answer, Answer)
    return {"ok": answer.ok, "data": answer.data, "reason": answer.reason}


def test_the_first_matching_rule_wins() -> None:
    policy = Policy(
        [
            {"prompt": "(?i)^deploy", "action": "accept", "values": {"region": "us-east-1"}},
            {"prompt": "deploy", "action": "decline"},
            {"action": "accept", "values": {"region": "eu-west-1"}},
        ]
    )
    assert outcome(policy(form_request(DEPLOY, "Deploy now"))) == {
        "ok": True,
        "data": {"region": "us-east-1", "replicas": 2},  # laid over the defaults, in the form's order
        "reason": None,
    }
    assert outcome(policy(form_request(DEPLOY, "Why deploy?")))["reason"] == "declined"
    assert outcome(policy(form_request(DEPLOY, "Other")))["data"] == {"region": "eu-west-1", "replicas": 2}


def test_a_request_no_rule_matches_is_cancelled_never_declined(caplog: pytest.LogCaptureFixture) -> None:
    policy = Policy([{"fields": ["region"], "action": "accept", "values": {"region": "eu-west-1"}}])
    with caplog.at_level(logging.INFO, logger="toolnexus.policy"):
        request = form_request(DEPLOY, "Deploy")
        assert outcome(policy(request)) == CANCEL
        assert outcome(Policy([])(url_request("https://auth.example.com/"))) == CANCEL
    assert f"elicitation {request.id}: no rule matches; cancel sent" in caplog.messages


def test_fields_kind_and_server_match() -> None:
    rules: list[dict[str, Any]] = [
        {"server": "deployer", "fields": ["notify", "region", "replicas"], "action": "decline"},
        {"kind": "input", "action": "cancel"},
    ]
    form = form_request(DEPLOY)
    assert outcome(Policy(rules)(form))["reason"] == "cancelled"  # no server name: rule 0 cannot match
    named = Policy(rules, server="deployer")
    assert outcome(named(form))["reason"] == "declined"
    assert outcome(named.for_server("other")(form))["reason"] == "cancelled"
    assert outcome(Policy(rules).for_server("deployer")(form))["reason"] == "declined"
    assert named.for_server("other").rules is named.rules


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://auth.example.com/start?x=1", True),
        ("https://AUTH.Example.COM:8443/", True),
        ("https://login.auth.example.com/", False),
        ("https://auth.example.com.evil.example/", False),
        ("https://auth.example.com@evil.example/", False),
        ("not a url", False),
    ],
)
def test_a_url_is_accepted_only_by_a_rule_naming_its_exact_host(url: str, accepted: bool) -> None:
    policy = Policy([{"url_host": "auth.example.com", "action": "accept"}, {"action": "accept"}])
    answer = outcome(policy(url_request(url, "Sign in")))
    assert answer == ({"ok": True, "data": None, "reason": None} if accepted else CANCEL)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example\\@bank.example/",  # a browser reads the backslash as '/': evil.example
        "https://evil.example\t@bank.example/",  # a browser drops the tab: evil.example again
        "https://evil.example\n@bank.example/",
        "https://user@bank.example/",  # userinfo, even in front of the right host
        "https://bank.example:pw@bank.example/",
        "https://bank.ex\tample/",  # the right host once the tab is dropped, but not what it shows
        "https://bank.example/\x1b]0;title\x07",  # a control character anywhere
        " https://bank.example/",  # spaces a browser strips
        "https:/bank.example/",  # a slash short
        "https://bank%2eexample/",  # a percent-encoded host
        "https://bank.example\u202e/",  # a bidi override
    ],
)
def test_a_url_that_is_not_what_it_shows_never_matches_url_host(url: str) -> None:
    """The policy reads a URL as a browser does (toolnexus.urls): `url_host: bank.example`
    never accepts `https://evil.example\\@bank.example/`, which a browser opens at evil.example,
    nor any URL with userinfo, backslashes, tabs or control characters."""
    policy = Policy([{"url_host": "bank.example", "action": "accept"}])
    assert outcome(policy(url_request(url, "Sign in"))) == CANCEL
    request = url_request(url, "Sign in")
    assert policy.decide(request) == (None, Answer.cancel(request))  # no rule matched


def test_the_same_url_written_plainly_matches() -> None:
    policy = Policy([{"url_host": "bank.example", "action": "accept"}])
    assert outcome(policy(url_request("https://bank.example/login?next=%2F", "Sign in")))["ok"] is True
    assert outcome(policy(url_request("https://BANK.example:8443/", "Sign in")))["ok"] is True


def test_an_international_url_host_matches_both_of_its_spellings() -> None:
    """A rule's host is read as a URL's is (as a browser reads it): ``bücher.example`` and its
    punycode ``xn--bcher-kva.example`` name one host, whichever the rule or the URL writes."""
    for rule_host in ("bücher.example", "xn--bcher-kva.example", "BÜCHER.example"):
        policy = Policy([{"url_host": rule_host, "action": "accept"}])
        for url in ("https://bücher.example/login", "https://xn--bcher-kva.example/login"):
            assert outcome(policy(url_request(url, "Sign in")))["ok"] is True, (rule_host, url)
        assert outcome(policy(url_request("https://bucher.example/", "Sign in"))) == CANCEL
    with pytest.raises(ValueError, match="url_host must be a bare host name"):
        Policy([{"url_host": "bank.example:443", "action": "accept"}])


def test_url_host_for_an_ipv6_address_and_a_port() -> None:
    policy = Policy(
        [{"url_host": "[::1]", "action": "accept"}, {"url_host": "LOCALHOST", "action": "accept"}]
    )
    assert outcome(policy(url_request("http://[::1]:8080/cb")))["ok"] is True
    assert outcome(policy(url_request("http://localhost:8080/cb")))["ok"] is True
    assert outcome(policy(url_request("http://[::2]/cb"))) == CANCEL
    for bad in ("auth.example.com:443", "user@auth.example.com", ""):
        with pytest.raises(ValueError, match="rule 0: url_host must be a bare host name"):
            Policy([{"url_host": bad, "action": "accept"}])


def test_an_accept_rule_without_url_host_passes_a_url_to_the_next_rule() -> None:
    policy = Policy([{"action": "accept", "values": {}}, {"kind": "authorization", "action": "decline"}])
    assert outcome(policy(url_request("https://auth.example.com/")))["reason"] == "declined"


def test_a_form_that_asks_for_a_secret_needs_allow_secrets() -> None:
    values = {"api_key": "k-123"}
    plain = Policy([{"action": "accept", "values": values}])
    assert outcome(plain(form_request(SECRET, "Key?"))) == CANCEL
    allowed = Policy([{"action": "accept", "values": values, "allow_secrets": True}])
    assert outcome(allowed(form_request(SECRET, "Key?")))["data"] == values


@pytest.mark.parametrize(
    "values",
    [
        {"replicas": 3},
        {"region": "mars-1"},
        {"region": "eu-west-1", "replicas": 0},
        {"region": "eu-west-1", "x": 1},
    ],
)
def test_values_that_cannot_fit_are_cancelled_with_a_log_line_naming_no_value(
    values: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    policy = Policy([{"action": "accept", "values": values}])
    with caplog.at_level(logging.WARNING, logger="toolnexus.policy"):
        assert outcome(policy(form_request(DEPLOY))) == CANCEL
    [line] = caplog.messages
    assert "rule 0: the values do not fit the form (" in line
    assert line.endswith("; cancel sent")
    assert "mars" not in line


@pytest.mark.parametrize(
    ("rule", "error", "words"),
    [
        ({"action": "accept", "when": "always"}, ValueError, "rule 0: unknown key 'when'"),
        (
            {"action": "allow"},
            ValueError,
            "rule 0: action must be one of accept, decline, cancel, ask, not 'allow'",
        ),
        (
            {"prompt": "([a-z]+", "action": "cancel"},
            ValueError,
            "rule 0: prompt is not a valid regular expression",
        ),
        ({"action": "ask", "values": {}}, ValueError, "rule 0: values is given with action 'ask'"),
        ({"action": "accept", "kind": "approval"}, ValueError, "rule 0: kind must be one of"),
        (
            {"action": "accept", "url_host": "https://a.example/"},
            ValueError,
            "rule 0: url_host must be a bare host",
        ),
        (
            {"action": "accept", "url_host": "a.example", "kind": "input"},
            ValueError,
            "rule 0: url_host matches URL",
        ),
        (
            {"action": "accept", "allow_secrets": "yes"},
            TypeError,
            "rule 0: allow_secrets must be true or false",
        ),
        ({"action": "accept", "server": 3}, TypeError, "rule 0: server must be a string"),
        ("accept", TypeError, "rule 0 must be a mapping"),
    ],
)
def test_a_rule_known_to_be_wrong_is_refused_when_the_policy_is_built(
    rule: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as caught:
        Policy([rule])
    assert str(caught.value).startswith(words)
    with pytest.raises(error, match=r"^rule 1[: ]"):
        Policy([{"action": "cancel"}, rule])


def test_ask_hands_the_request_to_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    asked: list[Request] = []

    def person(request: Request) -> Answer:
        asked.append(request)
        return Answer(request.id, False, None, "declined")

    request = form_request(DEPLOY)
    policy = Policy([{"action": "decline", "prompt": "No"}, {"action": "ask"}], fallback=person)
    assert policy.decide(request) == (1, None)
    assert outcome(policy(request))["reason"] == "declined"
    assert asked == [request]
    with caplog.at_level(logging.WARNING, logger="toolnexus.policy"):
        assert outcome(Policy([{"action": "ask"}])(request)) == CANCEL
    assert "rule 0 says ask, but the policy has no fallback" in caplog.text


def test_a_deeply_nested_policy_file_is_a_clear_error(tmp_path: Path) -> None:
    """Issue 20: a policy file nested 100,000 deep raised RecursionError."""
    deep = 100_000
    path = tmp_path / "deep.json"
    path.write_text('{"rules": ' + "[" * deep + "]" * deep + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"deep.json: nested too deeply to be a policy file"):
        Policy.from_file(path)
    if sys.version_info >= (3, 11):
        path = tmp_path / "deep.toml"
        path.write_text("rules = " + "[" * deep + "]" * deep + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=r"deep.toml: nested too deeply to be a policy file"):
            Policy.from_file(path)


def test_policy_files(tmp_path: Path) -> None:
    rules = {"rules": [{"prompt": "Deploy", "action": "accept", "values": {"region": "eu-west-1"}}]}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(rules), encoding="utf-8")
    policy = Policy.from_file(path, server="deployer")
    assert policy.server == "deployer"
    assert outcome(policy(form_request(DEPLOY, "Deploy")))["ok"] is True

    path.write_text(json.dumps({"rules": [{"action": "maybe"}]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"policy.json: rule 0: action must be one of"):
        Policy.from_file(path)
    path.write_text(json.dumps({"rules": [], "version": 2}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"policy.json: unknown key 'version'"):
        Policy.from_file(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"policy.json: not valid JSON"):
        Policy.from_file(path)
    with pytest.raises(ValueError, match=r"a policy file is .json or .toml"):
        Policy.from_file(tmp_path / "policy.yaml")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is in the standard library from 3.11")
def test_a_toml_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        '[[rules]]\nprompt = "Deploy"\naction = "accept"\nvalues = { region = "eu-west-1", notify = true }\n'
        '\n[[rules]]\nkind = "authorization"\nurl_host = "auth.example.com"\naction = "accept"\n',
        encoding="utf-8",
    )
    policy = Policy.from_file(path)
    assert outcome(policy(form_request(DEPLOY, "Deploy")))["data"] == {
        "region": "eu-west-1",
        "replicas": 2,
        "notify": True,
    }
    assert outcome(policy(url_request("https://auth.example.com/")))["ok"] is True
    path.write_text("rules = [", encoding="utf-8")
    with pytest.raises(ValueError, match=r"policy.toml: not valid TOML"):
        Policy.from_file(path)


@pytest.mark.skipif(
    sys.version_info >= (3, 11), reason="what 3.10, which has no tomllib, says; this Python has it"
)
def test_a_toml_policy_file_on_3_10_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text("rules = []\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"TOML policy files need Python 3.11 or later"):
        Policy.from_file(path)


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_policy_through_a_real_server(era: Any) -> None:
    async def person(request: Request) -> Answer:
        return Answer(request.id, True, {"region": "us-east-1", "notify": False})

    policy = Policy(
        [
            {"kind": "authorization", "url_host": "auth.example.com", "action": "accept"},
            {"prompt": "^Deploy", "action": "accept", "values": {"region": "eu-west-1"}},
            {"prompt": "^Ask", "action": "ask"},
        ],
        fallback=person,
    )
    form = await elicit_through_server(policy, schema=DEPLOY, message="Deploy", era=era)
    assert (form.action, form.content) == ("accept", {"region": "eu-west-1", "replicas": 2})
    link = await elicit_through_server(policy, url="https://auth.example.com/x", era=era)
    assert link.action == "accept"
    other = await elicit_through_server(policy.acall, url="https://evil.example/x", era=era)
    assert other.action == "cancel"
    with pytest.raises(TypeError, match="the fallback is async"):
        policy(form_request(DEPLOY, "Ask me"))
    asked = await elicit_through_server(policy.acall, schema=DEPLOY, message="Ask me", era=era)
    assert (asked.action, asked.content) == (
        "accept",
        {"region": "us-east-1", "replicas": 2, "notify": False},
    )
