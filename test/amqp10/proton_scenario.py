"""Qpid Proton (python3-qpid-proton) against Redrive's AMQP 1.0 listener.

  proton_scenario.py URL send QUEUE BODY     sends BODY with typed application properties
  proton_scenario.py URL receive QUEUE       receives one message, accepts it, and prints it
                                             as JSON with each annotation's AMQP type name
  proton_scenario.py URL settle QUEUE STEPS  receives one message per step (credit 1 each) and
                                             settles it with the step's outcome: accepted,
                                             released, rejected, failed (modified with
                                             delivery-failed), undeliverable (modified with
                                             undeliverable-here), each optionally followed by
                                             ":" and JSON annotations for a modified outcome;
                                             prints what each delivery carried
  proton_scenario.py URL credit QUEUE N      grants N credits, waits, then drains with 100:
                                             prints how many came before and after the drain,
                                             and the credit left
"""
import json
import sys

from proton import Array, Delivery, Message, Timeout, symbol
from proton.utils import BlockingConnection

OUTCOMES = {
    'accepted': Delivery.ACCEPTED,
    'released': Delivery.RELEASED,
    'rejected': Delivery.REJECTED,
    'failed': Delivery.MODIFIED,
    'undeliverable': Delivery.MODIFIED,
}


def typed(v):
    """A value as [type name, printable value]: the AMQP type proton decoded it as."""
    if isinstance(v, Array):
        return ['array', [typed(e) for e in v.elements]]
    if isinstance(v, dict):
        return ['map', {str(k): [type(k).__name__, typed(x)] for k, x in v.items()}]
    if isinstance(v, list):
        return ['list', [typed(e) for e in v]]
    return [type(v).__name__, v if isinstance(v, (int, float, bool, str)) or v is None else str(v)]


def pause(conn, seconds):
    """Handles the connection's events for `seconds`."""
    try:
        conn.wait(lambda: False, timeout=seconds)
    except Timeout:
        pass


def settle(conn, queue, steps):
    """Each step: one delivery, settled as the step says; what each delivery carried."""
    receiver = conn.create_receiver('/queues/' + queue, credit=0)
    out = []
    for step in steps:
        name, _, annotations = step.partition(':')
        receiver.link.flow(1)
        conn.wait(lambda: receiver.fetcher.has_message, timeout=10)
        m = receiver.fetcher.pop()
        out.append({
            'body': m.body,
            'delivery_count': m.delivery_count,
            'first_acquirer': m.first_acquirer,
            'annotations': {str(k): typed(v) for k, v in (m.annotations or {}).items()},
        })
        delivery = receiver.fetcher.unsettled.popleft()
        if name == 'failed':
            delivery.local.failed = True
        if name == 'undeliverable':
            delivery.local.undeliverable = True
        if annotations:
            delivery.local.annotations = {symbol(k): v for k, v in json.loads(annotations).items()}
        delivery.update(OUTCOMES[name])
        delivery.settle()
        pause(conn, 0.3)  # the settlement goes out and is applied before the next credit
    receiver.close()
    return out


def credit(conn, queue, n):
    """N credits, then a drain: the server sends no more than the credit, then what is left."""
    receiver = conn.create_receiver('/queues/' + queue, credit=0)
    link = receiver.link
    link.flow(n)
    pause(conn, 0.5)
    before = receiver.fetcher.has_message
    link.drain(100)
    conn.wait(lambda: link.credit == 0 and not link.draining(), timeout=10)
    out = {'before_drain': before, 'drained': receiver.fetcher.has_message - before, 'credit': link.credit}
    for _ in range(receiver.fetcher.has_message):
        receiver.fetcher.pop()
        receiver.fetcher.settle(Delivery.ACCEPTED)
    pause(conn, 0.3)
    return out


def main():
    url, mode, queue = sys.argv[1:4]
    conn = BlockingConnection(url, timeout=10, allowed_mechs='PLAIN')
    try:
        if mode == 'settle':
            print(json.dumps(settle(conn, queue, sys.argv[4:])))
        elif mode == 'credit':
            print(json.dumps(credit(conn, queue, int(sys.argv[4]))))
        elif mode == 'send':
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
