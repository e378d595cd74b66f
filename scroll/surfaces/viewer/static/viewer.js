// Payload handles open in place, one page at a time: the server renders each page as HTML.
document.addEventListener("click", async (ev) => {
  const button = ev.target.closest("button.payload-open");
  if (!button) return;
  ev.preventDefault();
  button.disabled = true;
  const box = button.closest(".payload");
  const reply = await fetch(button.dataset.url, {credentials: "same-origin"});
  const html = await reply.text();
  (button.closest(".more") || button).remove();
  box.insertAdjacentHTML("beforeend", reply.ok ? html : `<p class="error">${reply.status}</p>`);
});
