// The toolnexus inbox's live updates: the page listens to the server's events and, when what
// it shows has changed, fetches it again (the list), reloads (a call with nothing left to
// answer, following it to its result) or says so (a question, whose form may hold what the
// person typed). A question answered elsewhere, or a call withdrawn (its server no longer
// waits), stops taking input at once, and says why. Everything works without this file; it
// only saves a reload.
(function () {
  "use strict";
  var body = document.body;
  var source = body.getAttribute("data-events");
  var live = body.getAttribute("data-live");
  if (!source || live === "none" || !window.EventSource || !window.fetch) {
    return;
  }
  var note = document.getElementById("live-note");
  var OPEN = { live: true, waiting: true };

  function close(section, text) {
    if (section.getAttribute("data-closed")) { return; }
    section.setAttribute("data-closed", "1");
    var controls = section.querySelectorAll("input, select, textarea, button");
    for (var i = 0; i < controls.length; i++) { controls[i].disabled = true; }
    var said = document.createElement("p");
    said.className = "closed-note";
    said.setAttribute("role", "status");
    said.textContent = text;
    var heading = section.querySelector("h2");
    if (heading && heading.nextSibling) {
      section.insertBefore(said, heading.nextSibling);
    } else {
      section.appendChild(said);
    }
  }

  function follow(state) {
    var sections = document.querySelectorAll("section.question[data-request]");
    var closedAll = !OPEN[state.status];
    var reason = state.status === "withdrawn"
      ? "This question was withdrawn" + (state.reason ? " (" + state.reason + ")" : "") +
        ": the server no longer waits, and an answer can no longer be recorded."
      : "This question was answered elsewhere: nothing more to answer here.";
    var closed = 0;
    for (var i = 0; i < sections.length; i++) {
      var id = sections[i].getAttribute("data-request");
      if (closedAll || state.answered.indexOf(id) >= 0) {
        if (!sections[i].querySelector("p.answered")) {
          close(sections[i], closedAll && state.status === "withdrawn" ? reason
            : "This question was answered elsewhere: nothing more to answer here.");
          closed++;
        }
      }
    }
    if (note) {
      note.textContent = closed ? (closedAll && state.status === "withdrawn" ? reason
        : "This call changed elsewhere: a question was answered.")
        : "This call changed elsewhere. Reload the page to see it.";
    }
  }

  var events = new EventSource(source);
  events.addEventListener("change", function (event) {
    if (live === "swap") {
      fetch(window.location.href, { headers: { "X-Inbox-Fragment": "1" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          var target = document.getElementById("live");
          if (html === null || !target) { return; }
          var parsed = new DOMParser().parseFromString(html, "text/html");
          target.replaceChildren.apply(target, Array.prototype.slice.call(parsed.body.childNodes));
          if (note) { note.textContent = "The list was updated."; }
        });
    } else if (live === "reload") {
      window.location.reload();  // nothing typed here to lose: follow the call
    } else {
      var state = null;
      try { state = JSON.parse(event.data); } catch (e) { state = null; }
      if (state && state.answered) {
        follow(state);
      } else if (note) {
        note.textContent = "This call changed elsewhere. Reload the page to see it.";
      }
    }
  });
})();
