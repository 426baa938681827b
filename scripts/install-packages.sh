# Sourced by setup.sh and sanitize.sh: install_missing PREFIX PACKAGE...
# installs the Debian packages that are not installed yet (apt-get update
# first, non-interactive, sudo when not root).
install_missing() {
  local who="$1"
  shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "$who: installing ${missing[*]}"
    local SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}
