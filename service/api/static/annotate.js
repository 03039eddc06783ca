// Keyboard shortcuts for the annotator's pages (workspace/annotator_*.html). Without this script the forms work as
// they are; with it: p, f, c, n choose the outcome of the highlighted criterion, r goes to its rationale, Esc
// leaves the rationale, Enter records, j and k move between criteria, s opens the next case. No shortcut acts
// while a person types in a text field, or with Ctrl, Alt or Meta held (the browser's own keys).
"use strict";

const OUTCOMES = { p: "passed", f: "failed", c: "cantTell", n: "inapplicable" };
const legend = document.getElementById("shortcuts");
const nextCase = document.getElementById("next-case");
const forms = [...document.querySelectorAll("form.determine")];
let current = null;

if (legend) legend.hidden = false;

// Forms a person can see: a form inside a closed <details> (determine again) is not one of them.
const shown = () => forms.filter((form) => !form.closest("details:not([open])"));

function highlight(form) {
  current = form;
  forms.forEach((f) => f.closest("section").classList.toggle("current", f === form));
}

function start() {
  const visible = shown();
  const target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
  const named = visible.find((form) => target && target.contains(form));
  const open = visible.filter((form) => form.dataset.determined === "false");
  const waiting = open.find((form) => form.closest("section").classList.contains("waiting"));
  highlight(named || waiting || open[0] || visible[0] || null);
}

function outcomeControl(form) {
  return form.querySelector("input[name=outcome]:checked") || form.querySelector("input[name=outcome]");
}

function typing(element) {
  if (element instanceof HTMLTextAreaElement || element instanceof HTMLSelectElement || element.isContentEditable) {
    return true;
  }
  const keys = ["radio", "checkbox", "submit", "button", "reset"]; // inputs a person does not type in
  return element instanceof HTMLInputElement && !keys.includes(element.type);
}

function move(step) {
  const visible = shown();
  if (!visible.length) return;
  const at = visible.indexOf(current);
  const form = visible[Math.min(Math.max(at + step, 0), visible.length - 1)];
  highlight(form);
  outcomeControl(form).focus();
  form.closest("section").scrollIntoView({ block: "start" });
}

document.addEventListener("focusin", (event) => {
  const form = event.target.closest && event.target.closest("form.determine");
  if (form) highlight(form);
});

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.altKey || event.metaKey) return;
  const target = event.target;
  if (target instanceof HTMLTextAreaElement) {
    // Typing a rationale: every key is the person's text, but Esc, which goes back to the outcome.
    const form = target.closest("form.determine");
    if (event.key === "Escape" && form) {
      event.preventDefault();
      outcomeControl(form).focus();
    }
    return;
  }
  if (typing(target)) return;
  const onLink = Boolean(target.closest && target.closest("a, button, summary")); // Enter there is the browser's
  if (event.key === "s" && nextCase) {
    event.preventDefault();
    nextCase.click();
  } else if (!current) {
    return;
  } else if (OUTCOMES[event.key]) {
    event.preventDefault();
    const choice = current.querySelector(`input[name=outcome][value=${OUTCOMES[event.key]}]`);
    choice.checked = true;
    choice.focus();
  } else if (event.key === "r") {
    event.preventDefault();
    current.querySelector("textarea").focus();
  } else if (event.key === "Enter" && !onLink) {
    event.preventDefault();
    current.requestSubmit();
  } else if (event.key === "j" || event.key === "k") {
    event.preventDefault();
    move(event.key === "j" ? 1 : -1);
  }
});

document.addEventListener("toggle", start, true); // a <details> opened or closed: its form is in or out
start();
