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

# non-ASCII characters become escapes of the asset's language (an ASCII page)
printf 'const s = "\xe2\x80\xa6";\n' >"$tmp/u.js"
printf '.a::before { content: "\xe2\x9c\x93"; }\n' >"$tmp/u.css"
printf '<!doctype html><p>\xe2\x97\x80</p><!--dsight:data-->\n' >"$tmp/u.html"
if scripts/embed-web "$tmp/u.c" "$tmp/u.html" "$tmp/u.js" "$tmp/u.css" 2>"$tmp/err" &&
	tr -d '\n\t' <"$tmp/u.c" | grep -q '92,117,50,48,50,54,' &&
	tr -d '\n\t' <"$tmp/u.c" | grep -q '92,48,48,50,55,49,51,' &&
	tr -d '\n\t' <"$tmp/u.c" | grep -q '38,35,120,50,53,99,48,59,' &&
	! grep -Eq '(^|[^0-9])(1[3-9][0-9]|2[0-5][0-9]),' "$tmp/u.c"; then
	echo "ok - embed-web writes non-ASCII characters as JS, CSS and HTML escapes"
else
	echo "not ok - embed-web writes non-ASCII characters as JS, CSS and HTML escapes"; cat "$tmp/err"
fi
printf 'const s = "\\\xe2\x80\xa6";\n' >"$tmp/bs.js"
if scripts/embed-web "$tmp/bs.c" "$tmp/index.html" "$tmp/bs.js" 2>"$tmp/err"; then
	echo "not ok - embed-web refuses a non-ASCII character after a backslash"
else
	echo "ok - embed-web refuses a non-ASCII character after a backslash"
fi

# the assets keep the order given (the Makefile's WEB_FILES: base.js first),
# not their names' order
printf 'var a = 1;\n' >"$tmp/z-first.js"
printf 'var b = 2;\n' >"$tmp/a-second.js"
if scripts/embed-web "$tmp/order.c" "$tmp/z-first.js" "$tmp/a-second.js" "$tmp/index.html" 2>"$tmp/err" &&
	[ "$(grep -o '{"[a-z.-]*", asset_[0-9]*' "$tmp/order.c" | tr '\n' ' ')" = \
		'{"z-first.js", asset_0 {"a-second.js", asset_1 {"index.html", asset_2 ' ]; then
	echo "ok - embed-web keeps the order of its arguments"
else
	echo "not ok - embed-web keeps the order of its arguments"; sed 's/^/#   /' "$tmp/err"
	grep '^	{"' "$tmp/order.c" | sed 's/^/#   /'
fi
# every viewer file is listed in the Makefile (a new one stops the build)
unlisted=$(make -s -p -n B="$tmp/b" "$tmp/b/gen/web_assets.c" 2>/dev/null | sed -n 's/^WEB_UNLISTED := *//p' | head -1)
if [ -z "$unlisted" ] && make -s -p -n B="$tmp/b" "$tmp/b/gen/web_assets.c" 2>/dev/null | grep -q '^WEB_FILES := web/base.js '; then
	echo "ok - the Makefile lists every web/ file, base.js first"
else
	echo "not ok - the Makefile lists every web/ file, base.js first (unlisted: $unlisted)"
fi
