# A leaky v1 host: it answers correctly, but at start it leaves a child in
# a new session, outside its process group, that would outlive the runtime
# were it not for Fabric's sweep: the child keeps the runtime's FABRIC_HOME
# entry, by which stop finds and kills it. It answers start only once the
# child has left the group. The child then blocks opening a FIFO nobody
# writes, and never execs again (a read of /proc/<pid>/environ during an
# exec sees nothing or a cut copy).
while read -r line; do
	case "$line" in
	'{"operation":"start"'*)
		setsid sh -c 'mkfifo "$FABRIC_HOME/hold"; touch "$FABRIC_HOME/escaped"; read x <"$FABRIC_HOME/hold"' </dev/null >/dev/null 2>&1 &
		while [ ! -e "$FABRIC_HOME/escaped" ]; do sleep 0.01; done
		echo '{"operation":"start","outcome":{"status":"succeeded","output":null}}' ;;
	'{"operation":"invoke"'*) echo '{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"ok"}}}' ;;
	'{"operation":"stop"'*) echo '{"operation":"stop","outcome":{"status":"succeeded","output":null}}'; exit 0 ;;
	esac
done
