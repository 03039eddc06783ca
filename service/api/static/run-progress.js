// A run's page follows the run while it goes on: the counts from the run's JSON each second, then, once its job
// has ended, the page's sections that depend on it (state, execution errors, the retry form) from the page itself.
// Without script the page refreshes itself while the run goes on (a <noscript> refresh).
(() => {
  "use strict";
  const section = document.getElementById("run-progress-section");
  if (!section || section.dataset.state !== "running") return;
  const show = (id, value) => { const e = document.getElementById(id); if (e) e.textContent = String(value); };
  let delay = 1000;

  async function refreshSections() {
    const answer = await fetch(location.href, {headers: {Accept: "text/html"}, credentials: "same-origin"});
    if (!answer.ok) throw new Error(`the page answered ${answer.status}`);
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
    for (const old of document.querySelectorAll("[data-refresh]")) {
      const replacement = fresh.getElementById(old.id);
      if (replacement) old.replaceWith(document.importNode(replacement, true));
    }
  }

  async function poll() {
    try {
      const answer = await fetch(section.dataset.run, {headers: {Accept: "application/json"}, credentials: "same-origin"});
      if (!answer.ok) throw new Error(`the run answered ${answer.status}`);
      const run = await answer.json();
      const bar = document.getElementById("run-progress");
      bar.max = run.probes;
      bar.value = run.cases;
      show("run-cases", run.cases);
      show("run-probes", run.probes);
      show("run-errors", run.executionErrors);
      if (!run.job || run.job.state !== "running") {
        await refreshSections();
        return;
      }
      delay = 1000;
    } catch {
      delay = Math.min(delay * 2, 30000);  // the service is busy or gone for a moment: ask less often
    }
    setTimeout(poll, delay);
  }

  setTimeout(poll, delay);
})();
