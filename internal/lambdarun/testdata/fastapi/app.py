"""FastAPI + Mangum comparison function for make bench (internal/lambdarun).

The usual Python way to write one operation of this API: a FastAPI app
behind Mangum, started by awslambdaric, serving GET /api/pr/scan/{id} with
one boto3 GetItem of the scan's item on the table in TABLE_NAME (at
DYNAMODB_ENDPOINT when set). Like the Go functions, it builds its client
once, at init.
"""

import os

import boto3
from fastapi import FastAPI, HTTPException
from mangum import Mangum

TABLE = os.environ["TABLE_NAME"]
db = boto3.client("dynamodb", endpoint_url=os.environ.get("DYNAMODB_ENDPOINT") or None)
app = FastAPI()


@app.get("/api/pr/scan/{pr_scan_id}")
def get_scan(pr_scan_id: int) -> dict:
    out = db.get_item(TableName=TABLE, Key={"PK": {"S": f"SCAN#{pr_scan_id}"}, "SK": {"S": "SCAN"}})
    item = out.get("Item")
    if item is None:
        raise HTTPException(status_code=404, detail="no such scan")
    return {
        "id": pr_scan_id,
        "scan_type": item.get("scan_type", {}).get("S"),
        "status": item.get("status", {}).get("S"),
    }


handler = Mangum(app, lifespan="off")
