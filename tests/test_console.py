"""ConsoleResolver, sensitive_fields and url_warnings, driven through in-memory streams.

The same resolver is driven through real subprocesses and a pseudo-terminal in
``test_cli.py``; these tests pin each rule of the terminal dialogue one at a time.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from toolnexus import Answer, Request
from toolnexus.console import ConsoleResolver
from toolnexus.forms import read_form, sensitive_fields
from toolnexus.urls import url_warnings

DEPLOY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "notify": {"type": "boolean", "title": "Notify", "default": True},
    },
    "required": ["environment", "replicas"],
}


def form(schema: dict[str, Any], prompt: str = "Fill this in") -> Request:
    return Request("req-1", "input", prompt, data={"schema": schema})


def ask(request: Request, lines: str, **options: Any) -> tuple[Answer, str]:
    """Answer ``request`` with the scripted ``lines``; return the answer and the transcript."""
    out = io.StringIO()
    options.setdefault("colour", False)
    resolver = ConsoleResolver(
        options.pop("server_name", "demo-server"), stdin=io.StringIO(lines), stdout=out, **options
    )
    answer = resolver(request)
    return answer, out.getvalue()


# --- forms -----------------------------------------------------------------------------


def test_issue_example_enum_integer_boolean_default_then_send() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "production\n3\n\n\n")
    assert answer == Answer("req-1", True, {"environment": "production", "replicas": 3, "notify": True})
    assert "demo-server asks" in text
    assert "Fill this in" in text
    assert "→ sent" in text


def test_shows_title_description_type_bounds_and_default() -> None:
    schema = {
        "type": "object",
        "properties": {
            "age": {
                "type": "integer",
                "title": "Age",
                "description": "In years",
                "minimum": 18,
                "maximum": 99,
            },
            "nick": {"type": "string", "title": "Nickname", "minLength": 2, "maxLength": 8, "default": "ada"},
            "when": {"type": "string", "format": "date"},
        },
    }
    _, text = ask(form(schema), "30\n\n\n\n")
    assert "Age (age)" in text
    assert "In years" in text
    assert "a whole number from 18 to 99" in text
    assert "length from 2 to 8 characters" in text
    assert "nick [ada]: " in text
    assert "a date (YYYY-MM-DD)" in text
    # Fields are asked in the schema's order.
    assert text.index("age: ") < text.index("nick [ada]: ") < text.index("when: ")


def test_enter_takes_default_and_optional_field_may_stay_empty() -> None:
    schema = {
        "type": "object",
        "properties": {"note": {"type": "string", "default": "hi"}, "extra": {"type": "string"}},
    }
    answer, text = ask(form(schema), "\n\n\n")
    assert answer.ok
    assert answer.data == {"note": "hi"}
    assert "extra: (empty)" in text


def test_enum_by_number_by_title_and_oneof_titles_shown() -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            },
            "colour": {"type": "string", "enum": ["red", "green"]},
        },
    }
    answer, text = ask(form(schema), "large\n2\n\n")
    assert answer.data == {"size": "l", "colour": "green"}
    assert "1) s (Small)  2) l (Large)" in text


def test_multi_select_by_values_and_numbers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
                "minItems": 1,
                "maxItems": 2,
            },
            "plain": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
        },
    }
    answer, text = ask(form(schema), "1, b\nz,1\n\n")
    assert answer.data == {"tags": ["a", "b"], "plain": ["z", "x"]}
    assert "choose from 1 to 2 of: 1) a (Alpha)  2) b (Beta)" in text


def test_booleans_numbers_and_integers_are_parsed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "yes": {"type": "boolean"},
            "no": {"type": "boolean"},
            "ratio": {"type": "number"},
            "count": {"type": "integer"},
        },
    }
    answer, _ = ask(form(schema), "y\nno\n0.5\n4.0\n\n")
    assert answer.data == {"yes": True, "no": False, "ratio": 0.5, "count": 4}
    assert isinstance(answer.data["count"], int)


def test_wrong_answer_is_asked_again_with_the_problem() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "prod\nproduction\n11\nmany\n7\n\n\n")
    assert answer.data == {"environment": "production", "replicas": 7, "notify": True}
    assert "'environment' must be one of: staging, production" in text
    assert "'replicas' must be at most 10" in text
    assert "'replicas' must be an integer" in text
    assert text.count("replicas: ") == 3


def test_three_wrong_answers_cancel_the_request() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "production\n0\n11\n-3\n5\n")
    assert answer == Answer("req-1", False, None, "cancelled")
    assert "no valid answer after 3 tries" in text
    assert text.count("replicas: ") == 3


def test_required_field_left_empty_is_asked_again() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "\nstaging\n2\n\n\n")
    assert answer.data == {"environment": "staging", "replicas": 2, "notify": True}
    assert "'environment' is required" in text


def test_attempts_is_configurable() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "nowhere\n", attempts=1)
    assert answer.reason == "cancelled"
    assert "no valid answer after 1 try" in text
    assert "1 tries" not in text


def test_review_shows_every_value_and_n_declines() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "staging\n2\nn\nn\n")
    assert answer == Answer("req-1", False, None, "declined")
    review = text[text.index("Review:") :]
    assert "Environment: staging" in review
    assert "Replicas: 2" in review
    assert "Notify: no" in review
    assert "→ declined" in text


def test_review_e_asks_the_form_again_with_current_values_as_defaults() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "staging\n2\n\ne\nproduction\n\nn\ny\n")
    assert answer.data == {"environment": "production", "replicas": 2, "notify": False}
    assert text.count("Review:") == 2
    assert "replicas [2]: " in text


def test_review_unknown_answer_is_asked_again() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "staging\n2\n\nmaybe\ny\n")
    assert answer.ok
    assert text.count("Send? [Y/n/e] ") == 2


@pytest.mark.parametrize(("command", "reason"), [(":decline", "declined"), (":cancel", "cancelled")])
@pytest.mark.parametrize("position", [0, 1, 3])
def test_decline_and_cancel_at_any_prompt(command: str, reason: str, position: int) -> None:
    answers = ["staging", "2", "", ""]
    answers[position] = command
    answer, _ = ask(form(DEPLOY_SCHEMA), "\n".join(answers) + "\n")
    assert answer == Answer("req-1", False, None, reason)


def test_end_of_input_cancels() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "staging\n")
    assert answer == Answer("req-1", False, None, "cancelled")
    assert "(end of input)" in text


def test_scripted_answers_are_echoed() -> None:
    _, text = ask(form(DEPLOY_SCHEMA), "staging\n2\n\n\n")
    assert "environment: staging\n" in text
    assert "replicas: 2\n" in text


def test_form_without_properties_goes_straight_to_review() -> None:
    answer, text = ask(Request("r", "input", "Confirm"), "\n")
    assert answer == Answer("r", True, {})
    assert "(no fields)" in text


# --- the secret guard ------------------------------------------------------------------

LOGIN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"user": {"type": "string"}, "pass": {"type": "string", "title": "Password"}},
    "required": ["user", "pass"],
}


def test_secret_guard_warns_and_enter_declines() -> None:
    answer, text = ask(form(LOGIN_SCHEMA), "\nada\nhunter2\n\n")
    assert answer == Answer("req-1", False, None, "declined")
    assert "seems to ask for a secret ('pass')" in text
    assert "forbids servers to ask for" in text
    assert "Continue anyway? [y/N] " in text
    assert "user: " not in text  # no field is asked before the consent


def test_secret_guard_y_continues_and_masks_the_secret() -> None:
    answer, text = ask(form(LOGIN_SCHEMA), "y\nada\nhunter2\n\n")
    assert answer.data == {"user": "ada", "pass": "hunter2"}
    assert "hunter2" not in text
    assert "Password: ***" in text


def test_no_guard_for_an_ordinary_form() -> None:
    _, text = ask(form(DEPLOY_SCHEMA), "staging\n2\n\n\n")
    assert "secret" not in text
    assert "Continue anyway" not in text


@pytest.mark.parametrize(
    ("prop_name", "prop"),
    [
        ("password", {}),
        ("userPassword", {}),
        ("API_KEY", {}),
        ("apiKey", {}),
        ("x", {"title": "Your API key"}),
        ("x", {"description": "The access token for the account"}),
        ("pass_phrase", {"title": "Passphrase"}),
        ("client_secret", {}),
        ("ssh", {"title": "Private key"}),
        ("cardNumber", {}),
        ("cvv", {}),
        ("cvc2", {}),
        ("pin", {"title": "PIN"}),
        ("code", {"title": "Security code"}),
        ("credentials", {}),
        ("x", {"title": "Your credential"}),
        ("passkey", {}),
        ("ssh", {"title": "SSH key"}),
        ("sshKey", {}),
        ("mfa", {}),
        ("code", {"title": "MFA code"}),
        ("twofa", {"title": "2FA code"}),
        ("code", {"description": "Your 2fa code"}),
        ("use2FA", {}),
        ("totp", {}),
        ("IBAN", {}),
        ("ssn", {}),
        ("x", {"title": "Social security number"}),
        ("account_number", {}),
        ("routingNumber", {}),
        ("cc_number", {}),
        ("ccNumber", {}),
        ("card_no", {}),
        ("x", {"title": "Card no."}),
    ],
)
def test_sensitive_fields_finds_secrets(prop_name: str, prop: dict[str, Any]) -> None:
    schema = {"properties": {"name": {"type": "string"}, prop_name: {"type": "string", **prop}}}
    assert sensitive_fields(schema) == [prop_name]


@pytest.mark.parametrize(
    "prop_name",
    [
        "name",
        "max_tokens",
        "spinner",
        "passenger",
        "keyboard",
        "environment",
        "pinned",
        "card",
        "account",
        "account_name",
        "card title",
        "card_title",
        "ssh_host",
        "social",
        "security",
        "routing",
        "number",
        "cc",
        "no_card",
        "fa",
        "2",
        "step 2 of 3",
        "credit",
        "ibanez",
        "totpal",
    ],
)
def test_sensitive_fields_ignores_ordinary_fields(prop_name: str) -> None:
    assert sensitive_fields({"properties": {prop_name: {"type": "string"}}}) == []


def test_sensitive_fields_keeps_schema_order_and_tolerates_junk() -> None:
    text = {"type": "string"}
    schema = {"properties": {"token": text, "a": text, "secret": text, "b": {"type": "boolean"}}}
    assert sensitive_fields(schema) == ["token", "secret"]
    assert sensitive_fields(read_form(schema)) == ["token", "secret"]
    assert sensitive_fields(None) == []
    assert sensitive_fields({"properties": []}) == []
    assert sensitive_fields({"properties": {"token": text, "b": 3}}) == []  # not a form at all


@pytest.mark.parametrize(
    "description",
    [
        # The reference MCP test server's integer field (server-everything).
        "Your favorite integer (do not give us your phone number, pin, or other sensitive info)",
        "Never share your password with anyone",
        "Don't enter a token here",
        "No password needed",
    ],
)
def test_text_that_tells_the_user_not_to_give_a_secret_is_not_a_secret(description: str) -> None:
    schema = {"properties": {"n": {"type": "integer", "description": description}}}
    assert sensitive_fields(schema) == []


@pytest.mark.parametrize(
    "description",
    ["Do not worry, enter your password", "Enter your PIN, not your password", "Your token (do not lose it)"],
)
def test_a_negation_elsewhere_does_not_hide_a_secret(description: str) -> None:
    schema = {"properties": {"n": {"type": "string", "description": description}}}
    assert sensitive_fields(schema) == ["n"]


# --- URL mode --------------------------------------------------------------------------


def auth(url: str | None) -> Request:
    return Request("auth-1", "authorization", "Sign in please", url=url)


def test_url_shows_full_url_and_host_on_its_own_line_and_n_declines() -> None:
    url = "https://auth.example.com:8443/authorize?client_id=abc&scope=x"
    answer, text = ask(auth(url), "n\n")
    assert answer == Answer("auth-1", False, None, "declined")
    assert f"  URL:  {url}\n" in text
    assert "  Host: auth.example.com:8443\n" in text
    assert "Open this URL in your browser? [y/N] " in text
    assert "!" not in text  # no warning for a plain https URL


def test_url_enter_declines() -> None:
    answer, _ = ask(auth("https://example.com/"), "\n")
    assert answer.reason == "declined"


def test_url_y_without_browser_prints_it_to_open_by_hand() -> None:
    answer, text = ask(auth("https://example.com/go"), "y\n", open_browser=False)
    assert answer == Answer("auth-1", True)
    assert "Open this URL by hand: https://example.com/go" in text


def test_url_host_is_highlighted_with_colour() -> None:
    _, text = ask(auth("https://example.com/go"), "n\n", colour=True)
    assert re.search(r"Host: \x1b\[[0-9;]+mexample\.com\x1b\[0m", text)
    _, plain = ask(auth("https://example.com/go"), "n\n", colour=False)
    assert "\x1b[" not in plain


def test_url_missing_declines_without_asking() -> None:
    answer, text = ask(auth(None), "")
    assert answer.reason == "declined"
    assert "no URL" in text


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/", ["not https"]),
        ("ftp://example.com/", ["not https"]),
        ("http://localhost:8080/cb", []),
        ("http://127.0.0.1/cb", []),
        ("http://[::1]:9/cb", []),
        ("https://xn--pple-43d.com/", ["punycode", "'аpple.com'"]),
        ("https://bücher.example/", ["not ASCII"]),
        ("https://bank.com@evil.example/", ["user name"]),
        ("https://user:pw@example.com/", ["user name or password"]),
        ("https://", ["no host"]),
        ("https:///path-only", ["slashes"]),
        ("http://127.evil.example/", ["not https"]),
        ("http://127.0.0.1.evil.example/", ["not https"]),
        ("http://127.255.0.1/cb", []),
        ("http://app.localhost/cb", []),
        ("http://[::1]/cb", []),
        ("http://[::2]/cb", ["not https"]),
        ("javascript:alert(1)", ["'javascript', not https"]),
        ("evil.example/login", ["no scheme"]),
        ("https://evil%2Eexample/", ["percent-encoded", "'evil.example'"]),
        ("https://example.com:notaport/", ["cannot be parsed"]),
        ("https://example.com/a?b=c#d", []),
    ],
)
def test_url_warnings(url: str, expected: list[str]) -> None:
    warnings = " | ".join(url_warnings(url))
    if not expected:
        assert warnings == ""
    for piece in expected:
        assert piece in warnings


def test_url_with_user_name_shows_the_real_host() -> None:
    _, text = ask(auth("https://accounts.example.com@evil.example/login"), "n\n")
    assert "  Host: evil.example\n" in text
    assert "the real host is the one shown above" in text


def test_server_text_cannot_inject_terminal_escapes() -> None:
    request = Request("r", "authorization", "Hi\x1b[2J\x1b[31mthere", url="https://example.com/\x1b]0;x\x07")
    _, text = ask(request, "n\n")
    assert "\x1b" not in text
    assert "\\x1b[2J" in text


# --- other kinds -----------------------------------------------------------------------


@pytest.mark.parametrize(("line", "ok"), [("y\n", True), ("yes\n", True), ("n\n", False), ("\n", False)])
def test_other_kinds_are_a_yes_no_question(line: str, ok: bool) -> None:
    answer, text = ask(Request("a-1", "approval", "Delete the branch?"), line)
    assert answer.ok is ok
    assert answer.reason == (None if ok else "declined")
    assert "Delete the branch?" in text
    assert "[y/N] " in text


def test_server_name_defaults_to_a_generic_one() -> None:
    out = io.StringIO()
    ConsoleResolver(stdin=io.StringIO("\n"), stdout=out, colour=False)(Request("a", "approval", "ok?"))
    assert "The MCP server asks" in out.getvalue()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="server_name"):
        ConsoleResolver(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="attempts"):
        ConsoleResolver(attempts=0)
    with pytest.raises(TypeError, match="Request"):
        ConsoleResolver(stdin=io.StringIO(), stdout=io.StringIO())({"id": "x"})  # type: ignore[arg-type]


def test_secret_warning_names_every_field_in_schema_order() -> None:
    text_field = {"type": "string"}
    names = ("token", "name", "apiKey", "pin")
    schema = {"type": "object", "properties": dict.fromkeys(names, text_field)}
    _, text = ask(form(schema), "\n")
    assert "('token', 'apiKey', 'pin')" in text


def test_unclear_yes_no_answer_is_asked_again_with_a_hint() -> None:
    answer, text = ask(auth("https://example.com/"), "maybe\nyes\n", open_browser=False)
    assert answer.ok
    assert "answer y or n" in text
    assert text.count("Open this URL in your browser? [y/N] ") == 2
    _, review = ask(form(DEPLOY_SCHEMA), "staging\n2\n\nsend\n\n")
    assert "answer y to send, n to decline or e to edit" in review


def test_requests_that_arrive_at_once_are_asked_one_after_the_other() -> None:
    import threading
    import time

    class SlowLines(io.StringIO):
        """A stdin whose every line takes a moment, as a person's would: the other thread
        gets to run while one waits for its answer."""

        def readline(self, size: int | None = -1, /) -> str:  # type: ignore[override]
            time.sleep(0.02)
            return super().readline(-1 if size is None else size)

    out = io.StringIO()
    # Two forms of one text field each: a value and the review, per request.
    lines = SlowLines("first\n\nsecond\n\n")
    resolver = ConsoleResolver("demo-server", stdin=lines, stdout=out, colour=False)
    schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    answers: dict[str, Answer] = {}
    start = threading.Barrier(2)

    def run(request_id: str) -> None:
        start.wait()
        answers[request_id] = resolver(
            Request(request_id, "input", f"Asked by {request_id}", data={"schema": schema})
        )

    threads = [threading.Thread(target=run, args=(name,)) for name in ("call-a", "call-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = out.getvalue()
    # Each dialogue runs whole: its header, its field and its review before the next header.
    blocks = text.split("── demo-server asks ──")[1:]
    assert len(blocks) == 2
    for block in blocks:
        assert block.count("Asked by") == 1
        assert block.count("Review:") == 1
        assert block.count("→ sent") == 1
    first = "call-a" if "Asked by call-a" in blocks[0] else "call-b"
    second = "call-b" if first == "call-a" else "call-a"
    assert answers[first] == Answer(first, True, {"word": "first"})
    assert answers[second] == Answer(second, True, {"word": "second"})


# --- server text in warnings -----------------------------------------------------------


def test_warnings_quoting_the_server_are_escaped() -> None:
    schema = {
        "type": "object",
        "properties": {"colour": {"type": "string", "enum": ["red\x1b[2J", "blue\n  ! fake line"]}},
        "required": ["colour"],
    }
    answer, text = ask(form(schema), "green\n:cancel\n")
    assert answer.reason == "cancelled"
    assert "must be one of" in text
    assert "\x1b" not in text
    assert "\n  ! fake line" not in text
    assert "red\\x1b[2J" in text


# --- URLs as a browser reads them ------------------------------------------------------


def recorder(opened: list[str]) -> Any:
    """A stand-in for :func:`webbrowser.open` that records the URL and says it opened it."""

    def open_url(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)
        return True

    return open_url


def test_backslash_url_shows_the_host_the_browser_visits_and_opens_the_url_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", recorder(opened))
    url = "https://evil.example\\@bank.example/login"
    answer, text = ask(auth(url), "y\n")
    assert answer.ok
    assert "  Host: evil.example\n" in text
    assert "backslash" in text
    assert opened == [url]  # exactly the URL that was shown


@pytest.mark.parametrize(
    ("url", "host", "warning"),
    [
        ("https://ba\tnk.example/", "bank.example", "tabs or line breaks"),
        ("https://evil.example/\n  Host: bank.example", "evil.example", "tabs or line breaks"),
        ("  https://example.com/ ", "example.com", "spaces or control characters"),
        ("https:evil.example/", "evil.example", "slashes"),
        ("HTTPS:\\\\evil.example\\x", "evil.example", "backslash"),
        ("https://user@evil.example\\@bank.example/", "evil.example", "user name"),
    ],
)
def test_url_host_is_the_one_a_browser_visits(url: str, host: str, warning: str) -> None:
    answer, text = ask(auth(url), "n\n")
    assert answer.reason == "declined"
    assert f"  Host: {host}\n" in text
    assert warning in " ".join(url_warnings(url))
    # A line break in the URL cannot fake a host line.
    assert [line for line in text.splitlines() if line.startswith("  Host: ")] == [f"  Host: {host}"]


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(document.cookie)", "file:///etc/passwd", "data:text/html,<b>hi</b>", "example.com/x"],
)
def test_urls_that_are_not_http_are_never_opened(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", recorder(opened))
    answer, text = ask(auth(url), "y\n")
    assert answer == Answer("auth-1", False, None, "declined")
    assert "this URL will not be opened" in text
    assert "Open this URL in your browser?" not in text
    assert opened == []


def test_url_that_cannot_be_parsed_is_not_offered() -> None:
    answer, text = ask(auth("https://example.com:notaport/"), "y\n", open_browser=False)
    assert answer.reason == "declined"
    assert "will not be opened" in text


# --- defaults, :clear and multi-selects ------------------------------------------------

BAD_DEFAULT = {"type": "integer", "minimum": 1, "maximum": 5, "default": 0}


def test_a_default_that_does_not_fit_is_refused_and_enter_no_longer_takes_it() -> None:
    required = {"type": "object", "properties": {"n": BAD_DEFAULT}, "required": ["n"]}
    answer, text = ask(form(required), "\n\n3\n\n")
    assert answer.data == {"n": 3}
    assert "'n' must be at least 1" in text
    assert "the default does not fit" in text
    assert "'n' is required" in text  # the second Enter: no default any more
    assert text.count("n [0]: ") == 1
    optional = {"type": "object", "properties": {"n": BAD_DEFAULT}}
    answer, _ = ask(form(optional), "\n\n\n")
    assert answer == Answer("req-1", True, {})


def test_clear_leaves_an_optional_field_empty() -> None:
    schema = {"type": "object", "properties": {"note": {"type": "string", "default": "hi"}}}
    answer, text = ask(form(schema), ":clear\n\n")
    assert answer == Answer("req-1", True, {})
    assert ":clear leaves an optional field empty" in text


def test_clear_in_edit_mode_empties_a_field_that_has_a_value() -> None:
    schema = {
        "type": "object",
        "properties": {"note": {"type": "string", "default": "hi"}, "count": {"type": "integer"}},
    }
    answer, text = ask(form(schema), "x\n4\ne\n:clear\n:clear\n\n")
    assert "note [x]: " in text
    assert answer == Answer("req-1", True, {})
    # Editing again, an emptied field stays empty on Enter (its schema default is not brought back).
    answer, _ = ask(form(schema), ":clear\n\ne\n\n\n\n")
    assert answer == Answer("req-1", True, {})


def test_clear_on_a_required_field_warns() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), ":clear\nstaging\n2\n\n\n")
    assert answer.data == {"environment": "staging", "replicas": 2, "notify": True}
    assert "'environment' is required: it cannot be left empty" in text


MULTI = {
    "type": "array",
    "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
}


def test_multi_select_drops_repeated_picks_in_first_order() -> None:
    schema = {"type": "object", "properties": {"tags": MULTI}}
    answer, _ = ask(form(schema), "2,b,1,a,1\n\n")
    assert answer.data == {"tags": ["b", "a"]}


def test_multi_select_only_commas_leaves_an_optional_field_empty() -> None:
    answer, _ = ask(form({"type": "object", "properties": {"tags": MULTI}}), ",,\n\n")
    assert answer == Answer("req-1", True, {})
    required = {"type": "object", "properties": {"tags": MULTI}, "required": ["tags"]}
    answer, text = ask(form(required), ",,\nb\n\n")
    assert answer.data == {"tags": ["b"]}
    assert "'tags' is required" in text


# --- forms the console cannot ask ------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {
            "schema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "address": {"type": "object"}},
            }
        },
        {"schema": {"type": "object", "properties": {"name": {"type": "string"}, "odd": 3}}},
        {"schema": {"type": "object", "properties": {"list": {"type": "array"}}}},
        {"schema": {"type": "object", "properties": {"pick": {"enum": []}}}},
        {"schema": {"type": "object", "properties": {"pwd": {"type": "string"}, "x": {"type": "null"}}}},
        {"schema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}},
        {"schema": {"type": "object", "properties": ["a", "b"]}},
        {"schema": {"type": "string"}},
        {"schema": "a form"},
        {"fields": ["a"]},
    ],
)
def test_a_form_the_console_cannot_ask_is_cancelled_before_any_question(data: dict[str, Any]) -> None:
    answer, text = ask(Request("req-1", "input", "Fill this in", data=data), "y\nada\n\n")
    assert answer == Answer("req-1", False, None, "cancelled")
    assert "this form cannot be answered at a terminal" in text
    assert "Continue anyway" not in text
    assert "name: " not in text
    assert "Review:" not in text


def test_an_object_schema_without_properties_is_still_confirmed() -> None:
    answer, text = ask(form({"type": "object", "properties": {}}), "\n")
    assert answer == Answer("req-1", True, {})
    assert "(no fields)" in text


def test_a_free_text_list_is_outside_the_subset_and_cancelled() -> None:
    # The spec's multi-selects offer choices; the SDK's servers refuse to send a bare list[str].
    schema = {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}}}
    answer, text = ask(form(schema), "ada, bob\n\n")
    assert answer == Answer("req-1", False, None, "cancelled")
    assert "a list of free text is not in the subset" in text


# --- wording ---------------------------------------------------------------------------


def test_a_wrong_yes_no_answer_says_y_or_n() -> None:
    schema = {"type": "object", "properties": {"notify": {"type": "boolean"}}, "required": ["notify"]}
    answer, text = ask(form(schema), "maybe\ny\n\n")
    assert answer.data == {"notify": True}
    assert "answer y or n" in text
    assert "true or false" not in text
    assert "Notify: yes" in text or "notify: yes" in text


def test_an_out_of_range_choice_number_says_which_numbers() -> None:
    answer, text = ask(form(DEPLOY_SCHEMA), "3\n1\n2\n\n\n")
    assert answer.data == {"environment": "staging", "replicas": 2, "notify": True}
    assert "choose 1 to 2 or a value" in text
    assert "must be one of" not in text
    _, multi = ask(form({"type": "object", "properties": {"tags": MULTI}}), "1,7\n\n\n")
    assert "choose 1 to 2 or a value" in multi


def test_a_choice_whose_value_is_a_number_is_not_out_of_range() -> None:
    schema = {"type": "object", "properties": {"size": {"type": "integer", "enum": [10, 20, 30]}}}
    answer, text = ask(form(schema), "20\n\n")
    assert answer.data == {"size": 20}
    assert "choose" not in text.split("size: 20")[1]


# --- quitting --------------------------------------------------------------------------


class TerminalLines(io.StringIO):
    """Scripted answers that claim to come from a terminal; ``"^C"`` is a Ctrl-C."""

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1, /) -> str:  # type: ignore[override]
        line = super().readline(-1 if size is None else size)
        if line == "^C\n":
            raise KeyboardInterrupt
        return line


def terminal_resolver(lines: str) -> tuple[ConsoleResolver, io.StringIO]:
    out = io.StringIO()
    return ConsoleResolver("demo-server", stdin=TerminalLines(lines), stdout=out, colour=False), out


def test_first_ctrl_c_cancels_the_question_and_the_second_quits() -> None:
    resolver, out = terminal_resolver("^C\nstaging\n^C\n")
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert "(press Ctrl-C again within 5 s to quit)" in out.getvalue()
    assert not resolver.quit_requested
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert resolver.quit_requested
    # From now on nothing is asked: a third request is cancelled without a question.
    before = out.getvalue()
    assert resolver(auth("https://example.com/")) == Answer("auth-1", False, None, "cancelled")
    assert out.getvalue() == before


def test_end_of_input_at_a_terminal_quits() -> None:
    resolver, _ = terminal_resolver("staging\n")
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert resolver.quit_requested
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"


def test_end_of_input_from_a_script_cancels_and_goes_on() -> None:
    out = io.StringIO()
    resolver = ConsoleResolver("demo-server", stdin=io.StringIO("staging\n"), stdout=out, colour=False)
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert not resolver.quit_requested
    assert resolver(auth("https://example.com/")).reason == "cancelled"  # asked, then end of input
    assert out.getvalue().count("asks ──") == 2


# --- forms read through the form model ---------------------------------------------------


def test_digits_int_cannot_read_are_a_re_ask_not_a_traceback() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pick": {"type": "string", "enum": ["a", "b"]},
            "n": {"type": "integer"},
        },
        "required": ["pick", "n"],
    }
    # '²' is a digit to str.isdigit() but not to int(); 5,000 digits are past int()'s limit.
    answer, text = ask(form(schema), "²\n2\n" + "9" * 5000 + "\n٣\n7\n\n")
    assert answer.data == {"pick": "b", "n": 7}
    assert "'pick' must be one of: a, b" in text
    assert text.count("'n' must be an integer") == 2


def test_a_400_digit_integer_is_a_problem_not_an_overflow() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": 5}}, "required": ["n"]}
    answer, text = ask(form(schema), "9" * 400 + "\n3\n\n")
    assert answer.data == {"n": 3}
    assert "'n' must be a number a 64-bit float can hold" in text


def test_enum_names_titles_are_shown_and_picked() -> None:
    schema = {
        "type": "object",
        "properties": {"size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]}},
    }
    answer, text = ask(form(schema), "large\n\n")
    assert answer.data == {"size": "l"}
    assert "1) s (Small)  2) l (Large)" in text


def test_a_nullable_field_of_an_mcp1_server_is_asked_as_optional() -> None:
    schema = {
        "type": "object",
        "properties": {
            "nick": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Nick"}
        },
    }
    answer, text = ask(form(schema), "\n\n")
    assert answer == Answer("req-1", True, {})
    assert "text · optional" in text


def test_a_second_ctrl_c_long_after_the_first_counts_as_a_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolnexus.console as console

    clock = [1000.0]
    monkeypatch.setattr(console, "_now", lambda: clock[0])
    resolver, out = terminal_resolver("^C\n^C\n^C\n")
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    clock[0] += console.QUIT_WINDOW + 1  # hours later, as far as the window is concerned
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert not resolver.quit_requested
    assert out.getvalue().count("(press Ctrl-C again within 5 s to quit)") == 2
    clock[0] += console.QUIT_WINDOW - 1  # within the window of the second: quits
    assert resolver(form(DEPLOY_SCHEMA)).reason == "cancelled"
    assert resolver.quit_requested


def waiting_resolver(lines: str) -> tuple[ConsoleResolver, io.StringIO, Any]:
    """A console whose URL request is one a -32042 retry waits on (registered as call_tool does)."""
    from toolnexus.mcp import ElicitationCompletions

    completions = ElicitationCompletions()
    out = io.StringIO()
    resolver = ConsoleResolver(
        "s", stdin=io.StringIO(lines), stdout=out, colour=False, open_browser=False, completions=completions
    )
    return resolver, out, completions


def test_a_url_a_retry_waits_on_asks_for_enter_after_opening() -> None:
    resolver, out, completions = waiting_resolver("y\n\n")
    request = auth("https://example.com/sign-in")
    completions._expect("el-1", request.id)
    assert resolver(request) == Answer("auth-1", True)
    assert "Press Enter when you have finished in the browser: \n" in out.getvalue()


def test_cancel_while_waiting_for_the_browser() -> None:
    resolver, _, completions = waiting_resolver("y\n:cancel\n")
    request = auth("https://example.com/sign-in")
    completions._expect("el-1", request.id)
    assert resolver(request).reason == "cancelled"


def test_a_url_asked_mid_call_does_not_wait() -> None:
    resolver, out, _ = waiting_resolver("y\n")
    assert resolver(auth("https://example.com/sign-in")) == Answer("auth-1", True)
    assert "Press Enter" not in out.getvalue()
