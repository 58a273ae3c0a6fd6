#!/bin/sh
# ensure-chromium.sh: make sure a headless-capable chromium is installed.
# Installs Debian's chromium package when missing and running as root;
# otherwise explains what to do. Prints the binary path on success.
set -e
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		command -v "$b"
		exit 0
	fi
done
if [ "$(id -u)" != "0" ]; then
	echo "ensure-chromium: chromium is not installed and we are not root; run: sudo apt-get install -y chromium" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y chromium >/tmp/ensure-chromium.log 2>&1; then
	apt-get update >>/tmp/ensure-chromium.log 2>&1
	apt-get install -y chromium >>/tmp/ensure-chromium.log 2>&1 || {
		echo "ensure-chromium: apt-get install chromium failed; see /tmp/ensure-chromium.log" >&2
		exit 1
	}
fi
command -v chromium
