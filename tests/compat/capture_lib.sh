# Shared by capture_accounting.sh and capture_sacct.sh (sourced): preparing a capture, running
# commands against the oracle and recording what they print.  The caller sets GOLD (the golden
# directory), WORK (the directory commands run in), SLURM_CONF and INDEX (GOLD/INDEX.txt), and
# NCAP=0.

# prepare_capture ORACLE_DIR [SIDE_FILE...]: user $OTHER exists, no oracle is left running in
# ORACLE_DIR, WORK is empty and open to everyone, and GOLD holds no captures yet (nor INDEX.txt
# and the side files named). Needs HERE, GOLD, WORK and OTHER.
prepare_capture() {
  local dir=$1 f; shift
  id "$OTHER" >/dev/null 2>&1 || useradd -m "$OTHER"
  [[ -d $dir ]] && "$HERE/oracle/down" "$dir" >/dev/null
  rm -rf "$WORK"; mkdir -p "$WORK"; chmod 1777 "$WORK"
  mkdir -p "$GOLD"
  find "$GOLD" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
  rm -f "$GOLD/INDEX.txt"
  for f in "$@"; do rm -f "${GOLD:?}/$f"; done
}

log() { printf '\n### %s\n' "$*" >&2; printf '\n### %s\n' "$*" >>"$INDEX"; }

# runas USER COMMAND (a shell string): run in WORK with a clean environment, stdin from $STDIN
STDIN=
runas() {
  local user=$1 cmd=$2 home
  home=$(getent passwd "$user" | cut -d: -f6)
  local envv=(env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LANG=C TZ=UTC
              SLURM_CONF="$SLURM_CONF")
  if [[ $user == root ]]; then
    (cd "$WORK" && printf '%s' "$STDIN" | "${envv[@]}" bash -c "$cmd")
  else
    (cd "$WORK" && printf '%s' "$STDIN" | runuser -u "$user" -- "${envv[@]}" bash -c "$cmd")
  fi
}

# cap NAME [--as USER] [--stdin TEXT] COMMAND: run it, write GOLD/NAME/{cmd,user,stdin,now,
# stdout,stderr,rc} and a line in INDEX
cap() {
  local name=$1; shift
  local user=root
  STDIN=
  while [[ $1 == --* ]]; do
    case $1 in
      --as) user=$2; shift 2 ;;
      --stdin) STDIN=$2; shift 2 ;;
    esac
  done
  local cmd=$1 d=$GOLD/$name
  [[ -e $d ]] && { echo "capture: $name taken twice" >&2; exit 1; }
  mkdir -p "$d"
  printf '%s\n' "$cmd" >"$d/cmd"
  [[ $user != root ]] && printf '%s\n' "$user" >"$d/user"
  [[ -n $STDIN ]] && printf '%s' "$STDIN" >"$d/stdin"
  date +%s >"$d/now"
  runas "$user" "$cmd" >"$d/stdout" 2>"$d/stderr"
  echo $? >"$d/rc"
  NCAP=$((NCAP + 1))
  printf '%03d %s%s%s rc=%s\n    $ %s\n' "$NCAP" "$name" "$([[ $user != root ]] && echo " [as $user]")" \
    "$([[ -n $STDIN ]] && printf ' [stdin %q]' "$STDIN")" "$(cat "$d/rc")" "$cmd" >>"$INDEX"
  printf '[%s] $ %s  (rc=%s)\n' "$name" "$cmd" "$(cat "$d/rc")" >&2
  sed 's/^/    /' "$d/stdout" "$d/stderr" >&2
}
