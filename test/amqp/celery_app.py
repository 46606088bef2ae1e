"""A small Celery app over AMQP for test/amqp/celery.test.ts: its worker runs with
`python3 -m celery -A celery_app worker`, its client with `python3 celery_app.py`.
The broker URL comes from REDRIVE_CELERY_BROKER. Prints what the client saw as one JSON line."""
import json
import os
import sys

from celery import Celery
from celery.exceptions import Reject

app = Celery("redrive_check", broker=os.environ["REDRIVE_CELERY_BROKER"], backend="rpc://")
app.conf.update(
    task_acks_late=True,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=False,
    task_default_queue="redrive-celery",
)

tried = set()


@app.task(bind=True, name="add")
def add(self, x, y):
    return x + y


@app.task(bind=True, name="flaky")
def flaky(self, key):
    # Rejected with requeue the first time this worker sees it: it must come back.
    if key not in tried:
        tried.add(key)
        raise Reject("first attempt", requeue=True)
    return "done " + key


if __name__ == "__main__":
    out = {}
    # The worker answers pings over its pidbox queue (`<name>.celery.pidbox`) once it is up.
    for _ in range(20):
        out["ping"] = sorted(k for reply in app.control.ping(timeout=1) for k in reply)
        if out["ping"]:
            break
    out["add"] = add.delay(2, 3).get(timeout=20)
    out["flaky"] = flaky.delay("k1").get(timeout=20)
    print(json.dumps(out))
