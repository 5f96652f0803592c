"""echo_server.py - a named endpoint that answers calls: handler 1 sends back
the arguments and the bytes it was given.  Ends on SIGTERM or Ctrl-C.
Run it as: python3 examples/echo_server.py [NAME]   (default "echo")"""
import signal
import sys

import shmam

name = sys.argv[1] if len(sys.argv) > 1 else "echo"
signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM as Ctrl-C
with shmam.Endpoint(name) as ep:

    @ep.handler(1)
    def echo(token, *args, data=None):  # data: None, or a memoryview
        token.reply(0, *args, data=bytes(data or b""))

    print("echo_server: serving", name, flush=True)
    try:
        while True:
            ep.wait()  # a signal that raises ends it: KeyboardInterrupt
    except KeyboardInterrupt:
        pass
