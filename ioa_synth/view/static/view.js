// ioa-synth view: the pages work without this script; it only submits a filter form when a
// select changes, so that a filter applies without pressing the button.
document.querySelectorAll("form.auto select").forEach(function (select) {
  select.addEventListener("change", function () {
    var page = select.form.querySelector("input[name=page]");
    if (page) page.remove();
    select.form.submit();
  });
});
