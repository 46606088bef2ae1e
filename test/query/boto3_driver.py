"""Runs SQS calls through boto3 for the Query tests: one JSON request per stdin line
({"op": "SendMessage", "input": {...}}), one JSON answer per stdout line.
Arguments: endpoint URL, then optionally the access key id and secret to sign with.
Blobs travel as base64 in both directions, as in the JSON protocol."""
import base64
import json
import sys

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

client = boto3.client(
    "sqs", endpoint_url=sys.argv[1], region_name="us-east-1",
    aws_access_key_id=(sys.argv[2:3] or ["x"])[0], aws_secret_access_key=(sys.argv[3:4] or ["y"])[0],
    config=Config(retries={"max_attempts": 1}),
)


def blobs_in(value):
    if isinstance(value, dict):
        return {k: base64.b64decode(v) if k == "BinaryValue" else blobs_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blobs_in(v) for v in value]
    return value


def blob_out(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    raise TypeError(type(value))


print(json.dumps({"ready": {"botocore": botocore.__version__, "protocol": client.meta.service_model.protocol}}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    method = getattr(client, botocore.xform_name(request["op"]), None)
    if method is None:
        print(json.dumps({"error": {"code": "ClientLacksOperation", "message": request["op"]}}), flush=True)
        continue
    try:
        output = method(**blobs_in(request["input"]))
        output.pop("ResponseMetadata", None)
        answer = {"output": output}
    except ClientError as e:
        error = e.response.get("Error", {})
        answer = {"error": {"code": error.get("Code"), "message": error.get("Message"), "type": error.get("Type"),
                            "status": e.response["ResponseMetadata"].get("HTTPStatusCode")}}
    except Exception as e:  # a checksum mismatch or a parse failure: the client rejected the answer
        answer = {"error": {"code": "ClientFailure", "message": f"{type(e).__name__}: {e}"}}
    print(json.dumps(answer, default=blob_out), flush=True)
