# Shared by run.sh and record-claude-agent-acp.sh (sourced): ending what a run started. Every
# process a run starts carries MARK in its environment (the caller sets MARK), so cleanup finds
# exactly those, children of children included, through /proc/*/environ.

marked_pids() {
  local f pid
  for f in $(grep -lzxF "$MARK" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}
    echo "${pid%/environ}"
  done
}

# SIGTERM to every marked process, a second's grace, then SIGKILL to what is left.
end_marked() {
  local pids
  pids=$(marked_pids)
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086 # one word per pid
    kill -TERM $pids 2>/dev/null
    sleep 1
    pids=$(marked_pids)
    # shellcheck disable=SC2086
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null
  fi
}
