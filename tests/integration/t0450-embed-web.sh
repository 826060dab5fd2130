#!/usr/bin/env bash
# scripts/embed-web refuses viewer assets that would end their inlined element.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '<!doctype html><!--dsight:data-->\n' >"$tmp/index.html"
printf 'const s = "<\\/script>";\n' >"$tmp/ok.js"
if scripts/embed-web "$tmp/out.c" "$tmp/index.html" "$tmp/ok.js" 2>"$tmp/err" &&
	grep -q 'html_assets\[\]' "$tmp/out.c"; then
	echo "ok - embed-web accepts clean assets"
else
	echo "not ok - embed-web accepts clean assets"; cat "$tmp/err"
fi

for bad in 'x = "</ScRiPt>";' '/* </STYLE> */'; do
	printf '%s\n' "$bad" >"$tmp/bad.js"
	if scripts/embed-web "$tmp/out2.c" "$tmp/index.html" "$tmp/bad.js" 2>"$tmp/err"; then
		echo "not ok - embed-web refuses: $bad"
	elif grep -q 'bad.js:1' "$tmp/err" && [ ! -e "$tmp/out2.c" ]; then
		echo "ok - embed-web refuses: $bad"
	else
		echo "not ok - embed-web refuses with a message naming the file: $bad"; cat "$tmp/err"
	fi
done
