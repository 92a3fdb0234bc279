// The toolnexus inbox's live updates: the page listens to the server's events and, when what
// it shows has changed, fetches it again (the list), reloads (a call with nothing left to
// answer, following it to its result) or says so (a question, whose form may hold what the
// person typed). Everything works without this file; it only saves a reload.
(function () {
  "use strict";
  var body = document.body;
  var source = body.getAttribute("data-events");
  var live = body.getAttribute("data-live");
  if (!source || live === "none" || !window.EventSource || !window.fetch) {
    return;
  }
  var note = document.getElementById("live-note");
  var events = new EventSource(source);
  events.addEventListener("change", function () {
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
    } else if (note) {
      note.textContent = "This call changed elsewhere. Reload the page to see it.";
    }
  });
})();
