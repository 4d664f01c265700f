from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.mcp_protocol import McpProtocol, check_mcp_protocol
from ..models.server_update_request_type_type_1 import (
    ServerUpdateRequestTypeType1,
    check_server_update_request_type_type_1,
)
from ..models.server_update_request_type_type_2_type_1 import (
    ServerUpdateRequestTypeType2Type1,
    check_server_update_request_type_type_2_type_1,
)
from ..models.server_update_request_type_type_3_type_1 import (
    ServerUpdateRequestTypeType3Type1,
    check_server_update_request_type_type_3_type_1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.o_auth_config import OAuthConfig
    from ..models.server_update_request_env_type_0 import ServerUpdateRequestEnvType0
    from ..models.server_update_request_headers_type_0 import (
        ServerUpdateRequestHeadersType0,
    )
    from ..models.upstream_identity import UpstreamIdentity


T = TypeVar("T", bound="ServerUpdateRequest")


@_attrs_define
class ServerUpdateRequest:
    """mcp/server/update/req: change some fields of a server's config. Absent fields stay as they
    are; a secret value given as `***` keeps the stored value.

        Attributes:
            type_ (None | ServerUpdateRequestTypeType1 | ServerUpdateRequestTypeType2Type1 |
                ServerUpdateRequestTypeType3Type1 | Unset): The A2E message type. Default: 'mcp/server/update/req'.
            id (None | str | Unset): Message id; a UUID when absent.
            version (None | str | Unset): A2E protocol version. Default: '1.0'. Example: 1.0.
            ts (float | None | Unset): Timestamp, seconds since the Unix epoch; now when absent.
            server_id (None | str | Unset):  Default: ''.
            name (None | str | Unset):
            cmd (list[str] | None | Unset):
            cwd (None | str | Unset):
            env (None | ServerUpdateRequestEnvType0 | Unset):
            url (None | str | Unset):
            headers (None | ServerUpdateRequestHeadersType0 | Unset):
            timeout (int | None | Unset):
            connect_timeout (int | None | Unset):
            auto_reconnect (bool | None | Unset):
            protocol_version (McpProtocol | None | Unset):
            tool_allow_list (list[str] | None | Unset):
            resource_allow_list (list[str] | None | Unset):
            auth (None | OAuthConfig | Unset):
            identity (None | Unset | UpstreamIdentity):
    """

    type_: (
        None
        | ServerUpdateRequestTypeType1
        | ServerUpdateRequestTypeType2Type1
        | ServerUpdateRequestTypeType3Type1
        | Unset
    ) = "mcp/server/update/req"
    id: None | str | Unset = UNSET
    version: None | str | Unset = "1.0"
    ts: float | None | Unset = UNSET
    server_id: None | str | Unset = ""
    name: None | str | Unset = UNSET
    cmd: list[str] | None | Unset = UNSET
    cwd: None | str | Unset = UNSET
    env: None | ServerUpdateRequestEnvType0 | Unset = UNSET
    url: None | str | Unset = UNSET
    headers: None | ServerUpdateRequestHeadersType0 | Unset = UNSET
    timeout: int | None | Unset = UNSET
    connect_timeout: int | None | Unset = UNSET
    auto_reconnect: bool | None | Unset = UNSET
    protocol_version: McpProtocol | None | Unset = UNSET
    tool_allow_list: list[str] | None | Unset = UNSET
    resource_allow_list: list[str] | None | Unset = UNSET
    auth: None | OAuthConfig | Unset = UNSET
    identity: None | Unset | UpstreamIdentity = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.o_auth_config import OAuthConfig
        from ..models.server_update_request_env_type_0 import (
            ServerUpdateRequestEnvType0,
        )
        from ..models.server_update_request_headers_type_0 import (
            ServerUpdateRequestHeadersType0,
        )
        from ..models.upstream_identity import UpstreamIdentity

        type_: None | str | Unset
        if isinstance(self.type_, Unset):
            type_ = UNSET
        elif (
            isinstance(self.type_, str)
            or isinstance(self.type_, str)
            or isinstance(self.type_, str)
        ):
            type_ = self.type_
        else:
            type_ = self.type_

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        ts: float | None | Unset
        if isinstance(self.ts, Unset):
            ts = UNSET
        else:
            ts = self.ts

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

        env: dict[str, Any] | None | Unset
        if isinstance(self.env, Unset):
            env = UNSET
        elif isinstance(self.env, ServerUpdateRequestEnvType0):
            env = self.env.to_dict()
        else:
            env = self.env

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, ServerUpdateRequestHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

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

        protocol_version: None | str | Unset
        if isinstance(self.protocol_version, Unset):
            protocol_version = UNSET
        elif isinstance(self.protocol_version, str):
            protocol_version = self.protocol_version
        else:
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
        if type_ is not UNSET:
            field_dict["type"] = type_
        if id is not UNSET:
            field_dict["id"] = id
        if version is not UNSET:
            field_dict["version"] = version
        if ts is not UNSET:
            field_dict["ts"] = ts
        if server_id is not UNSET:
            field_dict["server_id"] = server_id
        if name is not UNSET:
            field_dict["name"] = name
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
        from ..models.o_auth_config import OAuthConfig
        from ..models.server_update_request_env_type_0 import (
            ServerUpdateRequestEnvType0,
        )
        from ..models.server_update_request_headers_type_0 import (
            ServerUpdateRequestHeadersType0,
        )
        from ..models.upstream_identity import UpstreamIdentity

        d = dict(src_dict)

        def _parse_type_(
            data: object,
        ) -> (
            None
            | ServerUpdateRequestTypeType1
            | ServerUpdateRequestTypeType2Type1
            | ServerUpdateRequestTypeType3Type1
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_1 = check_server_update_request_type_type_1(data)

                return type_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_2_type_1 = check_server_update_request_type_type_2_type_1(
                    data
                )

                return type_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                type_type_3_type_1 = check_server_update_request_type_type_3_type_1(
                    data
                )

                return type_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None
                | ServerUpdateRequestTypeType1
                | ServerUpdateRequestTypeType2Type1
                | ServerUpdateRequestTypeType3Type1
                | Unset,
                data,
            )

        type_ = _parse_type_(d.pop("type", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        def _parse_ts(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ts = _parse_ts(d.pop("ts", UNSET))

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

        def _parse_env(data: object) -> None | ServerUpdateRequestEnvType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                env_type_0 = ServerUpdateRequestEnvType0.from_dict(data)

                return env_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServerUpdateRequestEnvType0 | Unset, data)

        env = _parse_env(d.pop("env", UNSET))

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))

        def _parse_headers(
            data: object,
        ) -> None | ServerUpdateRequestHeadersType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = ServerUpdateRequestHeadersType0.from_dict(data)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ServerUpdateRequestHeadersType0 | Unset, data)

        headers = _parse_headers(d.pop("headers", UNSET))

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

        def _parse_protocol_version(data: object) -> McpProtocol | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                protocol_version_type_0 = check_mcp_protocol(data)

                return protocol_version_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpProtocol | None | Unset, data)

        protocol_version = _parse_protocol_version(d.pop("protocol_version", UNSET))

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

        server_update_request = cls(
            type_=type_,
            id=id,
            version=version,
            ts=ts,
            server_id=server_id,
            name=name,
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

        server_update_request.additional_properties = d
        return server_update_request

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
