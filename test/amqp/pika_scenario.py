"""A publish, consume, reject scenario through Python's pika (Debian's python3-pika).
Arguments: AMQP URL, queue name. Prints what the client observed as one JSON line."""
import json
import sys

import pika

url, queue = sys.argv[1], sys.argv[2]
conn = pika.BlockingConnection(pika.URLParameters(url))
ch = conn.channel()
ch.confirm_delivery()
seen = {}
seen["declare"] = ch.queue_declare(queue=queue, durable=True).method.message_count
for i in range(3):
    ch.basic_publish(exchange="", routing_key=queue, body=("m%d" % i).encode(),
                     properties=pika.BasicProperties(content_type="text/plain", delivery_mode=2, headers={"n": i}),
                     mandatory=True)
seen["depth"] = ch.queue_declare(queue=queue, passive=True).method.message_count

method, props, body = ch.basic_get(queue=queue)
seen["get"] = [body.decode(), method.redelivered, method.message_count, props.content_type, props.headers, props.delivery_mode]
ch.basic_reject(delivery_tag=method.delivery_tag, requeue=False)

ch.basic_qos(prefetch_count=1)
events = []
for method, props, body in ch.consume(queue, inactivity_timeout=1.5):
    if method is None:
        break
    events.append([body.decode(), method.redelivered])
    if body == b"m1" and not method.redelivered:
        ch.basic_nack(delivery_tag=method.delivery_tag, requeue=True)
    else:
        ch.basic_ack(delivery_tag=method.delivery_tag)
    if len(events) == 3:
        break
ch.cancel()
seen["consumed"] = events
seen["after"] = ch.queue_declare(queue=queue, passive=True).method.message_count
ch.queue_delete(queue=queue)
conn.close()
print(json.dumps(seen))
