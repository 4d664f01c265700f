"""Discovers how to authenticate to an MCP endpoint the way the Python `mcp` SDK's OAuth client
does (RFC 9728, SEP-985), with the SDK's own functions and models.

Usage: resource_metadata.py MCP_URL

Sends an initialize request without a token, reads the 401's `WWW-Authenticate`, builds the
discovery URLs in the SDK's order, fetches the first that answers, validates it as the SDK's
`ProtectedResourceMetadata` (which, as MCP requires, needs an authorization server) and checks the
resource it names covers MCP_URL. Prints one JSON object: the status, the challenge, the error
body, the metadata URL, the metadata, and the SDK's verdict (`sdk_valid`: true or its error).
"""

import asyncio
import json
import sys

import httpx
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
)
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url


async def main() -> None:
    url = sys.argv[1]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "metadata-check", "version": "1"},
        },
    }
    async with httpx.AsyncClient(timeout=10) as client:
        refused = await client.post(
            url, json=initialize, headers={"accept": "application/json, text/event-stream"}
        )
        header_url = extract_resource_metadata_from_www_auth(refused)
        metadata_url, metadata = None, None
        for candidate in build_protected_resource_metadata_discovery_urls(header_url, url):
            answer = await client.get(candidate)
            if answer.status_code == 200:
                metadata_url, metadata = candidate, answer.json()
                break
    try:
        valid = ProtectedResourceMetadata.model_validate(metadata)
        sdk_valid = True
        covers = check_resource_allowed(resource_url_from_server_url(url), str(valid.resource))
    except Exception as error:  # noqa: BLE001 - the verdict is the report
        sdk_valid, covers = str(error), False
    print(
        json.dumps(
            {
                "status": refused.status_code,
                "www_authenticate": refused.headers.get("www-authenticate"),
                "body": refused.json(),
                "header_url": header_url,
                "metadata_url": metadata_url,
                "metadata": metadata,
                "sdk_valid": sdk_valid,
                "covers": covers,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
