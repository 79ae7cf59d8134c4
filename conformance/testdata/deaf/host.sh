# A v1 host that answers stop but never exits, not even on EOF: Fabric must
# kill it after its exit grace, and the cleanup item must fail naming that.
while read -r line; do
	case "$line" in
	'{"operation":"start"'*) echo '{"operation":"start","outcome":{"status":"succeeded","output":null}}' ;;
	'{"operation":"invoke"'*) echo '{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"ok"}}}' ;;
	'{"operation":"stop"'*) echo '{"operation":"stop","outcome":{"status":"succeeded","output":null}}'; exec sleep 60 ;;
	esac
done
