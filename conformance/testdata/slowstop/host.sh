# A v1 host whose stop is slow but clean: it answers stop after longer
# than its exit grace and then exits by itself. The cleanup item must pass:
# a slow stop is not a host that had to be killed.
while read -r line; do
	case "$line" in
	'{"operation":"start"'*) echo '{"operation":"start","outcome":{"status":"succeeded","output":null}}' ;;
	'{"operation":"invoke"'*) echo '{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"ok"}}}' ;;
	'{"operation":"stop"'*) sleep 1.5; echo '{"operation":"stop","outcome":{"status":"succeeded","output":null}}'; exit 0 ;;
	esac
done
