// Checks the contributor form as it is typed: a moment after the last
// keystroke the form is sent to /drafts/validate (nothing is saved) and
// each problem is shown next to the field it is about, for the fields
// the contributor has touched (all of them once the page has shown the
// problems of a save); the others are counted. Without this script the
// form works the same; its problems are shown when it is saved or
// checked.
(function () {
  "use strict";
  var form = document.getElementById("editor");
  if (!form || !window.fetch || !window.URLSearchParams) return;
  var url = form.getAttribute("data-validate");
  var status = document.getElementById("check-status");
  var general = document.getElementById("m-general");
  var timer = 0, sent = 0;
  var touched = {};
  var all = form.querySelector(".field-msg:not(:empty)") !== null;

  function isTouched(field) {
    if (all) return true;
    for (var name in touched) {
      if (name === field || name.indexOf(field + ".") === 0 || field.indexOf(name + ".") === 0) return true;
    }
    return false;
  }

  function clear() {
    var slots = form.querySelectorAll(".field-msg");
    for (var i = 0; i < slots.length; i++) slots[i].textContent = "";
    var bad = form.querySelectorAll("[aria-invalid]");
    for (i = 0; i < bad.length; i++) bad[i].removeAttribute("aria-invalid");
    var marked = form.querySelectorAll(".invalid");
    for (i = 0; i < marked.length; i++) marked[i].classList.remove("invalid");
    general.textContent = "";
  }

  function show(problems) {
    clear();
    var inForm = form.elements.view.value === "form";
    var waiting = 0;
    problems.forEach(function (p) {
      if (inForm && p.field && !isTouched(p.field)) {
        waiting++;
        return;
      }
      var slot = inForm && p.field ? document.getElementById("m-" + p.field) : null;
      if (!slot) {
        var li = document.createElement("li");
        li.textContent = (p.line ? "line " + p.line + ": " : "") + p.message;
        general.appendChild(li);
        return;
      }
      var span = document.createElement("span");
      span.textContent = p.message;
      slot.appendChild(span);
      slot.appendChild(document.createTextNode(" "));
      var input = document.getElementById("f-" + p.field);
      if (input && /^(INPUT|TEXTAREA|SELECT)$/.test(input.tagName)) input.setAttribute("aria-invalid", "true");
      var box = slot.parentNode;
      if (box && box.classList) box.classList.add("invalid");
    });
    general.hidden = general.children.length === 0;
    var n = problems.length - waiting;
    var text = n === 0 ? "No problems found so far." :
      n + (n === 1 ? " problem" : " problems") + " found as you type; " +
      (inForm ? "each is shown next to its field." : "each is listed with its line.");
    if (waiting > 0) {
      text += " " + waiting + (waiting === 1 ? " more is" : " more are") +
        " in fields not filled in yet; Check without saving lists them.";
    }
    status.textContent = text;
  }

  function check() {
    var mine = ++sent;
    var body = new URLSearchParams(new FormData(form));
    body.set("action", "check");
    fetch(url, {
      method: "POST", body: body, credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (res) {
      var type = res.headers.get("Content-Type") || "";
      if (!res.ok || type.indexOf("application/json") !== 0) return null;
      return res.json();
    }).then(function (ans) {
      if (ans && mine === sent) show(ans.problems || []);
    }).catch(function () { /* offline: the save still checks */ });
  }

  function later(ev) {
    if (ev && ev.target && ev.target.name) touched[ev.target.name] = true;
    clearTimeout(timer);
    timer = setTimeout(check, 600);
  }
  form.addEventListener("input", later);
  form.addEventListener("change", later);
})();
