// The theme toggle. Without this script the pages follow the system's
// light or dark setting; with it, a button in the header switches between
// the system's setting, light and dark, and the choice is remembered.
(function () {
  var key = "incidentlib-theme";
  var order = ["auto", "light", "dark"];
  var root = document.documentElement;
  // Before the body is parsed: the stylesheet shows the button only on a
  // root marked so, which makes it part of the first layout rather than
  // an element that appears (and moves the header) once the page loads.
  root.classList.add("theme-js");
  function read() {
    try { return localStorage.getItem(key) || "auto"; } catch (e) { return "auto"; }
  }
  function apply(theme) {
    if (theme === "auto") { root.removeAttribute("data-theme"); } else { root.setAttribute("data-theme", theme); }
  }
  apply(read());
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (!button) { return; }
    function label(theme) {
      // The accessible name starts with the visible word, so that a
      // person who sees "Auto" can say it to a voice control.
      var shown = theme === "auto" ? "Auto" : theme === "light" ? "Light" : "Dark";
      button.textContent = shown;
      button.setAttribute("aria-label", shown + " colour theme" + (theme === "auto" ? ", as the system" : "") + " (change)");
    }
    label(read());
    button.addEventListener("click", function () {
      var next = order[(order.indexOf(read()) + 1) % order.length];
      try { localStorage.setItem(key, next); } catch (e) {}
      apply(next);
      label(next);
    });
  });
})();
