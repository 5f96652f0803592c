"""echo_client.py [NAME [TEXT]]: calls the echo server once, with a 1 s deadline."""
import sys
import shmam

name = sys.argv[1] if len(sys.argv) > 1 else "echo"
text = sys.argv[2] if len(sys.argv) > 2 else "hello"
with shmam.Endpoint() as ep:  # anonymous: nothing left behind
    ep.map(0, name)
    r = ep.call(0, 1, 6, 7, data=text.encode(), timeout=1.0)  # shmam.Timeout...
    print("echo_client: %s, args %d %d" % (r.data.decode(), *r.args))
