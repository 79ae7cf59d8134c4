# A leaky v1 host: it answers correctly, but at start it leaves a child in
# a new session, outside its process group, that outlives the runtime, and
# hides it from Fabric's own sweep: the child does not carry the runtime's
# FABRIC_HOME entry (only another variable naming the directory, which the
# suite's leak check still sees). It answers start only once the child has
# left the group. The child then blocks opening a FIFO nobody writes: it
# never execs again, for a read of /proc/<pid>/environ during an exec
# sees nothing or a cut copy, and a check would miss it.
while read -r line; do
	case "$line" in
	'{"operation":"start"'*)
		LEAKED_FROM="$FABRIC_HOME" setsid env -u FABRIC_HOME sh -c 'mkfifo "$LEAKED_FROM/hold"; touch "$LEAKED_FROM/escaped"; read x <"$LEAKED_FROM/hold"' </dev/null >/dev/null 2>&1 &
		while [ ! -e "$FABRIC_HOME/escaped" ]; do sleep 0.01; done
		echo '{"operation":"start","outcome":{"status":"succeeded","output":null}}' ;;
	'{"operation":"invoke"'*) echo '{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"ok"}}}' ;;
	'{"operation":"stop"'*) echo '{"operation":"stop","outcome":{"status":"succeeded","output":null}}'; exit 0 ;;
	esac
done
