"""pika: a consumer that nacks with requeue and cancels itself from its callback, then
closes its connection; a second connection must find the message. Arguments: AMQP URL,
queue name, rounds. Prints the bodies the second connection got, as one JSON line."""
import json
import sys

import pika

url, queue, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = pika.BlockingConnection(pika.URLParameters(url))
ach = admin.channel()
ach.queue_declare(queue=queue)
ach.queue_purge(queue=queue)
got = []
for r in range(rounds):
    ach.basic_publish(exchange="", routing_key=queue, body=("m%d" % r).encode())
    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()

    def on_message(channel, method, props, body):
        channel.basic_nack(delivery_tag=method.delivery_tag, requeue=True)
        channel.basic_cancel(method.consumer_tag)

    ch.basic_consume(queue=queue, on_message_callback=on_message)
    conn.process_data_events(time_limit=0.3)
    conn.close()
    body = None
    for _ in range(50):
        method, props, b = ach.basic_get(queue=queue, auto_ack=True)
        if method:
            body = b.decode()
            break
        admin.sleep(0.02)
    got.append(body)
ach.queue_delete(queue=queue)
admin.close()
print(json.dumps(got))
