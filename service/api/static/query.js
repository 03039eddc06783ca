// The query page: loads an example into the editor, sends the editor's query to /sparql with fetch and shows
// the answer (a table for SELECT, the boolean for ASK, the text of a graph for CONSTRUCT and DESCRIBE).
// The DOM is built with textContent only: nothing the store returns is parsed as HTML.
"use strict";

const form = document.getElementById("query-form");
const editor = document.getElementById("query-text");
const status = document.getElementById("query-status");
const results = document.getElementById("query-results");

document.querySelectorAll("button[data-example]").forEach((button) => {
  button.addEventListener("click", () => {
    editor.value = document.getElementById("example-" + button.dataset.example).textContent;
    form.scrollIntoView();
    editor.focus();
  });
});

function cell(term) {
  const td = document.createElement("td");
  if (!term) return td;
  if (term.type === "uri" && /^https?:\/\//.test(term.value)) {
    const link = document.createElement("a");
    link.href = term.value;
    link.textContent = term.value;
    td.append(link);
  } else {
    td.textContent = term.type === "bnode" ? "_:" + term.value : term.value;
    if (term["xml:lang"]) td.title = "@" + term["xml:lang"];
    else if (term.datatype) td.title = term.datatype;
  }
  return td;
}

function table(answer) {
  const vars = answer.head.vars;
  const bindings = answer.results.bindings;
  const table = document.createElement("table");
  table.id = "results-table";
  const head = table.createTHead().insertRow();
  for (const name of vars) {
    const th = document.createElement("th");
    th.textContent = "?" + name;
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of bindings) {
    const tr = body.insertRow();
    for (const name of vars) tr.append(cell(row[name]));
  }
  status.textContent = bindings.length + (bindings.length === 1 ? " row" : " rows");
  results.append(table);
}

async function problem(response) {
  try {
    const body = await response.json();
    return body.detail || body.title || response.statusText;
  } catch {
    return response.statusText;
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  status.textContent = "Running…";
  results.replaceChildren();
  let response;
  try {
    response = await fetch(form.action, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/sparql-results+json, text/turtle;q=0.9",
      },
      body: new URLSearchParams({ query: editor.value }),
    });
  } catch (error) {
    status.textContent = "The service did not answer: " + error.message;
    return;
  }
  if (!response.ok) {
    status.textContent = "Error " + response.status + ": " + (await problem(response));
    return;
  }
  const type = (response.headers.get("Content-Type") || "").split(";")[0].trim();
  if (type === "application/sparql-results+json") {
    const answer = await response.json();
    if ("boolean" in answer) status.textContent = "Answer: " + answer.boolean;
    else table(answer);
  } else {
    const text = document.createElement("pre");
    text.className = "alternate";
    text.textContent = await response.text();
    status.textContent = type;
    results.append(text);
  }
});
