"""echo_server.py [NAME]: answers calls to handler 1 with their arguments and bytes."""
import signal
import sys
import shmam

name = sys.argv[1] if len(sys.argv) > 1 else "echo"
signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM as Ctrl-C
with shmam.Endpoint(name) as ep:  # a named endpoint; SIGTERM or Ctrl-C ends it
    @ep.handler(1)
    def echo(token, *args, data=None):  # data: None, or a memoryview
        token.reply(0, *args, data=bytes(data or b""))

    print("echo_server: serving", name, flush=True)
    try:
        while True:
            ep.wait()  # a signal that raises ends it: KeyboardInterrupt
    except KeyboardInterrupt:
        pass
