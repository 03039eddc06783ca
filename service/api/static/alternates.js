// Shows a page's RDF alternates in place: a link with data-accept is fetched with that Accept header (a
// plain link cannot set it) and its text is shown below the links. Without scripts the links still name the
// media types, and the page lists the curl commands.
"use strict";

document.querySelectorAll("a[data-accept]").forEach((link) => {
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    const view = document.getElementById("alternate-view");
    view.hidden = false;
    view.textContent = "Loading " + link.dataset.accept + "…";
    try {
      const response = await fetch(link.href, { headers: { Accept: link.dataset.accept } });
      view.textContent = await response.text();
    } catch (error) {
      view.textContent = "The service did not answer: " + error.message;
    }
  });
});
