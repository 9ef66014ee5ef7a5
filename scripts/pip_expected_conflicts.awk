# Filter of pip's output in scripts/setup.sh. bigcodebench 0.2.5 is installed --no-deps (its
# checker needs only numpy and matplotlib; its declared requirements pull vllm, e2b and provider
# SDKs), so every later `pip install` ends with pip's red resolver block listing them as not
# installed. That block, when it names bigcodebench alone, is expected: it is replaced by one
# line saying so. A block naming any other package is printed whole (a real conflict), and every
# other line passes unchanged.
function flush(   i) {
  if (other) {
    print header
    for (i = 1; i <= n; i++) print held[i]
  } else {
    print "[setup] pip's resolver notes bigcodebench's declared requirements (vllm, e2b, provider SDKs) are" \
          " not installed: expected, it is installed --no-deps and its checker needs none of them"
  }
  inblock = 0; n = 0; other = 0
  fflush()
}
/^ERROR: pip's dependency resolver does not currently take into account/ {
  if (inblock) flush()
  inblock = 1; n = 0; other = 0; header = $0
  next
}
inblock && / requires | has requirement / {
  held[++n] = $0
  if ($1 != "bigcodebench") other = 1
  next
}
inblock { flush() }
{ print; fflush() }
END { if (inblock) flush() }
