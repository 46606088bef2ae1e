"""Transactions (tx.select, tx.commit, tx.rollback) through pika. Arguments: AMQP URL,
queue name. Prints what the client observed as one JSON line."""
import json
import sys

import pika

url, queue = sys.argv[1], sys.argv[2]
out = {}


def attempt(name, f):
    c = pika.BlockingConnection(pika.URLParameters(url))
    ch = c.channel()
    try:
        out[name] = f(c, ch)
    except pika.exceptions.ChannelClosedByBroker as e:
        out[name] = [e.reply_code, e.reply_text]
    if c.is_open:
        c.close()


def depth(ch):
    return ch.queue_declare(queue, passive=True).method.message_count


def semantics(c, ch):
    seen = []
    ch.queue_declare(queue)
    ch.queue_purge(queue)
    ch.tx_select()
    ch.basic_publish("", queue, b"a")
    ch.basic_publish("", queue, b"b")
    seen.append(["published, not committed", depth(ch)])
    ch.tx_rollback()
    seen.append(["rolled back", depth(ch)])
    ch.basic_publish("", queue, b"c")
    ch.basic_publish("", queue, b"d")
    ch.tx_commit()
    seen.append(["committed", depth(ch)])
    m1, _, b1 = ch.basic_get(queue)
    m2, _, b2 = ch.basic_get(queue)
    seen.append(["got", b1.decode(), b2.decode(), depth(ch)])
    ch.basic_ack(m1.delivery_tag)
    ch.basic_reject(m2.delivery_tag, requeue=True)
    seen.append(["ack and reject, not committed", depth(ch)])
    ch.tx_rollback()
    seen.append(["rolled back", depth(ch)])
    ch.basic_ack(m1.delivery_tag)
    ch.basic_reject(m2.delivery_tag, requeue=True)
    ch.tx_commit()
    seen.append(["ack and reject committed", depth(ch)])
    m3, _, b3 = ch.basic_get(queue)
    seen.append(["requeued", b3.decode(), m3.redelivered])
    ch.basic_ack(m3.delivery_tag)
    ch.tx_commit()
    ch.basic_publish("", queue, b"never")
    return seen


attempt("semantics", semantics)


def close_uncommitted(c, ch):
    ch.tx_select()
    ch.basic_publish("", queue, b"dropped")
    c.close()
    c2 = pika.BlockingConnection(pika.URLParameters(url))
    n = depth(c2.channel())
    c2.close()
    return ["closed with an uncommitted publish", n]


attempt("close uncommitted", close_uncommitted)


def ack_then_close(c, ch):
    ch.basic_publish("", queue, b"held")
    m, _, _ = ch.basic_get(queue)
    ch.tx_select()
    ch.basic_ack(m.delivery_tag)
    c.close()
    c2 = pika.BlockingConnection(pika.URLParameters(url))
    ch2 = c2.channel()
    m2, _, b2 = ch2.basic_get(queue, auto_ack=True)
    c2.close()
    return ["uncommitted ack, then close: requeued", b2.decode(), m2.redelivered]


attempt("ack then close", ack_then_close)


def tx_then_confirm(c, ch):
    ch.tx_select()
    ch.confirm_delivery()


def confirm_then_tx(c, ch):
    ch.confirm_delivery()
    ch.tx_select()


attempt("tx then confirm", tx_then_confirm)
attempt("confirm then tx", confirm_then_tx)
attempt("commit without select", lambda c, ch: ch.tx_commit())
attempt("rollback without select", lambda c, ch: ch.tx_rollback())


def unknown_tag(c, ch):
    ch.tx_select()
    ch.basic_ack(99)
    ch.tx_commit()


attempt("unknown delivery tag", unknown_tag)


def no_exchange(c, ch):
    ch.tx_select()
    ch.basic_publish("no-such-exchange-" + queue, "k", b"a")
    ch.tx_commit()


attempt("no such exchange", no_exchange)
c = pika.BlockingConnection(pika.URLParameters(url))
c.channel().queue_delete(queue)
c.close()
print(json.dumps(out))
