# A broken v1 host: start and stop are answered correctly, but every invoke
# is answered as if it were a start (the wrong operation).
while read -r line; do
	case "$line" in
	'{"operation":"start"'*) echo '{"operation":"start","outcome":{"status":"succeeded","output":null}}' ;;
	'{"operation":"invoke"'*) echo '{"operation":"start","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"ok"}}}' ;;
	'{"operation":"stop"'*) echo '{"operation":"stop","outcome":{"status":"succeeded","output":null}}'; exit 0 ;;
	esac
done
