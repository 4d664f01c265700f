from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.mcp_protocol import McpProtocol, check_mcp_protocol
from ..models.mcp_transport import McpTransport, check_mcp_transport
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_server_config_env import McpServerConfigEnv
    from ..models.mcp_server_config_headers import McpServerConfigHeaders
    from ..models.o_auth_config import OAuthConfig
    from ..models.upstream_identity import UpstreamIdentity


T = TypeVar("T", bound="McpServerConfig")


@_attrs_define
class McpServerConfig:
    """MCPServerConfig: how to reach one MCP server and what of it to expose.

    Attributes:
        server_id (None | str | Unset): Unique server identifier; 8 hex characters are generated when empty.
        name (None | str | Unset): Display name.
        transport (McpTransport | Unset): How mcp-bridge reaches an MCP server.
        cmd (list[str] | None | Unset): Stdio command and its arguments.
        cwd (None | str | Unset): Working directory of the stdio command.
        env (McpServerConfigEnv | Unset): Environment variables of the stdio command (values are secret: shown as
            `***`).
        url (None | str | Unset): URL of an `http`, `sse` or `ws` server.
        headers (McpServerConfigHeaders | Unset): HTTP headers sent to an `http`, `sse` or `ws` server (values are
            secret: shown as `***`).
        timeout (int | None | Unset): Request timeout in seconds.
        connect_timeout (int | None | Unset): Bound on connecting and initialising, in seconds (the smaller of this and
            `timeout` applies).
        auto_reconnect (bool | None | Unset): Reconnect on its own when the connection drops.
        protocol_version (McpProtocol | Unset): How a session with an MCP server starts (`protocol_version` of
            MCPServerConfig).
        tool_allow_list (list[str] | None | Unset): Upstream tool names exposed (exact match); empty exposes all.
        resource_allow_list (list[str] | None | Unset): Resource URIs exposed: exact, or a prefix when an entry ends
            with `*`; empty exposes all.
        auth (None | OAuthConfig | Unset):
        identity (None | Unset | UpstreamIdentity):
    """

    server_id: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    transport: McpTransport | Unset = UNSET
    cmd: list[str] | None | Unset = UNSET
    cwd: None | str | Unset = UNSET
    env: McpServerConfigEnv | Unset = UNSET
    url: None | str | Unset = UNSET
    headers: McpServerConfigHeaders | Unset = UNSET
    timeout: int | None | Unset = UNSET
    connect_timeout: int | None | Unset = UNSET
    auto_reconnect: bool | None | Unset = UNSET
    protocol_version: McpProtocol | Unset = UNSET
    tool_allow_list: list[str] | None | Unset = UNSET
    resource_allow_list: list[str] | None | Unset = UNSET
    auth: None | OAuthConfig | Unset = UNSET
    identity: None | Unset | UpstreamIdentity = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.o_auth_config import OAuthConfig
        from ..models.upstream_identity import UpstreamIdentity

        server_id: None | str | Unset
        if isinstance(self.server_id, Unset):
            server_id = UNSET
        else:
            server_id = self.server_id

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        transport: str | Unset = UNSET
        if not isinstance(self.transport, Unset):
            transport = self.transport

        cmd: list[str] | None | Unset
        if isinstance(self.cmd, Unset):
            cmd = UNSET
        elif isinstance(self.cmd, list):
            cmd = self.cmd

        else:
            cmd = self.cmd

        cwd: None | str | Unset
        if isinstance(self.cwd, Unset):
            cwd = UNSET
        else:
            cwd = self.cwd

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        timeout: int | None | Unset
        if isinstance(self.timeout, Unset):
            timeout = UNSET
        else:
            timeout = self.timeout

        connect_timeout: int | None | Unset
        if isinstance(self.connect_timeout, Unset):
            connect_timeout = UNSET
        else:
            connect_timeout = self.connect_timeout

        auto_reconnect: bool | None | Unset
        if isinstance(self.auto_reconnect, Unset):
            auto_reconnect = UNSET
        else:
            auto_reconnect = self.auto_reconnect

        protocol_version: str | Unset = UNSET
        if not isinstance(self.protocol_version, Unset):
            protocol_version = self.protocol_version

        tool_allow_list: list[str] | None | Unset
        if isinstance(self.tool_allow_list, Unset):
            tool_allow_list = UNSET
        elif isinstance(self.tool_allow_list, list):
            tool_allow_list = self.tool_allow_list

        else:
            tool_allow_list = self.tool_allow_list

        resource_allow_list: list[str] | None | Unset
        if isinstance(self.resource_allow_list, Unset):
            resource_allow_list = UNSET
        elif isinstance(self.resource_allow_list, list):
            resource_allow_list = self.resource_allow_list

        else:
            resource_allow_list = self.resource_allow_list

        auth: dict[str, Any] | None | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, OAuthConfig):
            auth = self.auth.to_dict()
        else:
            auth = self.auth

        identity: dict[str, Any] | None | Unset
        if isinstance(self.identity, Unset):
            identity = UNSET
        elif isinstance(self.identity, UpstreamIdentity):
            identity = self.identity.to_dict()
        else:
            identity = self.identity

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if server_id is not UNSET:
            field_dict["server_id"] = server_id
        if name is not UNSET:
            field_dict["name"] = name
        if transport is not UNSET:
            field_dict["transport"] = transport
        if cmd is not UNSET:
            field_dict["cmd"] = cmd
        if cwd is not UNSET:
            field_dict["cwd"] = cwd
        if env is not UNSET:
            field_dict["env"] = env
        if url is not UNSET:
            field_dict["url"] = url
        if headers is not UNSET:
            field_dict["headers"] = headers
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if connect_timeout is not UNSET:
            field_dict["connect_timeout"] = connect_timeout
        if auto_reconnect is not UNSET:
            field_dict["auto_reconnect"] = auto_reconnect
        if protocol_version is not UNSET:
            field_dict["protocol_version"] = protocol_version
        if tool_allow_list is not UNSET:
            field_dict["tool_allow_list"] = tool_allow_list
        if resource_allow_list is not UNSET:
            field_dict["resource_allow_list"] = resource_allow_list
        if auth is not UNSET:
            field_dict["auth"] = auth
        if identity is not UNSET:
            field_dict["identity"] = identity

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_config_env import McpServerConfigEnv
        from ..models.mcp_server_config_headers import McpServerConfigHeaders
        from ..models.o_auth_config import OAuthConfig
        from ..models.upstream_identity import UpstreamIdentity

        d = dict(src_dict)

        def _parse_server_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        server_id = _parse_server_id(d.pop("server_id", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        _transport = d.pop("transport", UNSET)
        transport: McpTransport | Unset
        if isinstance(_transport, Unset):
            transport = UNSET
        else:
            transport = check_mcp_transport(_transport)

        def _parse_cmd(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                cmd_type_0 = cast(list[str], data)

                return cmd_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        cmd = _parse_cmd(d.pop("cmd", UNSET))

        def _parse_cwd(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cwd = _parse_cwd(d.pop("cwd", UNSET))

        _env = d.pop("env", UNSET)
        env: McpServerConfigEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = McpServerConfigEnv.from_dict(_env)

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: McpServerConfigHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = McpServerConfigHeaders.from_dict(_headers)

        def _parse_timeout(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout = _parse_timeout(d.pop("timeout", UNSET))

        def _parse_connect_timeout(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        connect_timeout = _parse_connect_timeout(d.pop("connect_timeout", UNSET))

        def _parse_auto_reconnect(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        auto_reconnect = _parse_auto_reconnect(d.pop("auto_reconnect", UNSET))

        _protocol_version = d.pop("protocol_version", UNSET)
        protocol_version: McpProtocol | Unset
        if isinstance(_protocol_version, Unset):
            protocol_version = UNSET
        else:
            protocol_version = check_mcp_protocol(_protocol_version)

        def _parse_tool_allow_list(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                tool_allow_list_type_0 = cast(list[str], data)

                return tool_allow_list_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        tool_allow_list = _parse_tool_allow_list(d.pop("tool_allow_list", UNSET))

        def _parse_resource_allow_list(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                resource_allow_list_type_0 = cast(list[str], data)

                return resource_allow_list_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        resource_allow_list = _parse_resource_allow_list(
            d.pop("resource_allow_list", UNSET)
        )

        def _parse_auth(data: object) -> None | OAuthConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                auth_type_0 = OAuthConfig.from_dict(data)

                return auth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OAuthConfig | Unset, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_identity(data: object) -> None | Unset | UpstreamIdentity:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                identity_type_0 = UpstreamIdentity.from_dict(data)

                return identity_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UpstreamIdentity, data)

        identity = _parse_identity(d.pop("identity", UNSET))

        mcp_server_config = cls(
            server_id=server_id,
            name=name,
            transport=transport,
            cmd=cmd,
            cwd=cwd,
            env=env,
            url=url,
            headers=headers,
            timeout=timeout,
            connect_timeout=connect_timeout,
            auto_reconnect=auto_reconnect,
            protocol_version=protocol_version,
            tool_allow_list=tool_allow_list,
            resource_allow_list=resource_allow_list,
            auth=auth,
            identity=identity,
        )

        mcp_server_config.additional_properties = d
        return mcp_server_config

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
