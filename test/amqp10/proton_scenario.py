"""Qpid Proton (python3-qpid-proton) against Redrive's AMQP 1.0 listener.

  proton_scenario.py URL send QUEUE BODY     sends BODY with typed application properties
  proton_scenario.py URL receive QUEUE       receives one message, accepts it, and prints it
                                             as JSON with each annotation's AMQP type name
"""
import json
import sys

from proton import Array, Message
from proton.utils import BlockingConnection


def typed(v):
    """A value as [type name, printable value]: the AMQP type proton decoded it as."""
    if isinstance(v, Array):
        return ['array', [typed(e) for e in v.elements]]
    if isinstance(v, dict):
        return ['map', {str(k): [type(k).__name__, typed(x)] for k, x in v.items()}]
    if isinstance(v, list):
        return ['list', [typed(e) for e in v]]
    return [type(v).__name__, v if isinstance(v, (int, float, bool, str)) or v is None else str(v)]


def main():
    url, mode, queue = sys.argv[1:4]
    conn = BlockingConnection(url, timeout=10, allowed_mechs='PLAIN')
    try:
        if mode == 'send':
            sender = conn.create_sender('/queues/' + queue)
            sender.send(Message(body=sys.argv[4], properties={'n': 5, 'who': 'proton'}, durable=True, subject='s'))
            print(json.dumps({'sent': True}))
        else:
            receiver = conn.create_receiver('/queues/' + queue, credit=1)
            m = receiver.receive(timeout=10)
            receiver.accept()
            out = {
                'body': m.body if isinstance(m.body, str) else typed(m.body),
                'properties': {k: typed(v) for k, v in (m.properties or {}).items()},
                'annotations': {str(k): typed(v) for k, v in (m.annotations or {}).items()},
                'durable': m.durable,
                'delivery_count': m.delivery_count,
            }
            print(json.dumps(out))
    finally:
        conn.close()


main()
