from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.o_auth_grant import OAuthGrant, check_o_auth_grant
from ..models.o_auth_kind import OAuthKind, check_o_auth_kind
from ..models.token_endpoint_auth import TokenEndpointAuth, check_token_endpoint_auth
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.identity_provider import IdentityProvider


T = TypeVar("T", bound="OAuthConfig")


@_attrs_define
class OAuthConfig:
    """OAuthConfig: how the bridge authorizes itself to an `http`, `sse` or `ws` server with OAuth 2.1
    (`auth` of MCPServerConfig). Without it, a server that answers 401 with
    `WWW-Authenticate: Bearer` is treated as `authorization_code` with discovery.

        Attributes:
            type_ (OAuthKind): The kind of an upstream's `auth` (`type` of OAuthConfig): OAuth 2.1 is the only one.
            grant_type (OAuthGrant | Unset): How the bridge obtains an upstream's token (`grant_type` of OAuthConfig).
            client_id (None | str | Unset): A client pre-registered with the authorization server; when absent the bridge
                uses its
                client ID metadata document or registers itself dynamically.
            client_secret (None | str | Unset): The secret of `client_id` (secret: shown as `***`).
            scopes (list[str] | None | Unset): Scopes to ask for; when empty, those the server names in `WWW-Authenticate`,
                else its
                `scopes_supported`, else none.
            token_endpoint_auth_method (None | TokenEndpointAuth | Unset):
            private_key (None | str | Unset): PEM private key (RSA or EC) signing the client assertion of `private_key_jwt`
                (secret: shown as `***`).
            per_agent (bool | None | Unset): Each agent authorizes for itself and is served over its own upstream session
                with its own
                token (`authorization_code` only).
            token_endpoint (None | str | Unset): `token_exchange`: the token endpoint; by default found by discovery, as for
                the other
                grants.
            audience (None | str | Unset): `token_exchange`: the `audience` asked for (a logical name of the server).
            resource (None | str | Unset): `token_exchange`: the `resource` asked for (RFC 8707); by default the server's
                `url`
                when no `audience` is given.
            idp (IdentityProvider | None | Unset):
            identity_assertion (None | str | Unset): `id_jag`: the identity assertion (an ID token of the identity provider)
                every ID-JAG of
                the server is asked with (secret: shown as `***`).
    """

    type_: OAuthKind
    grant_type: OAuthGrant | Unset = UNSET
    client_id: None | str | Unset = UNSET
    client_secret: None | str | Unset = UNSET
    scopes: list[str] | None | Unset = UNSET
    token_endpoint_auth_method: None | TokenEndpointAuth | Unset = UNSET
    private_key: None | str | Unset = UNSET
    per_agent: bool | None | Unset = UNSET
    token_endpoint: None | str | Unset = UNSET
    audience: None | str | Unset = UNSET
    resource: None | str | Unset = UNSET
    idp: IdentityProvider | None | Unset = UNSET
    identity_assertion: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.identity_provider import IdentityProvider

        type_: str = self.type_

        grant_type: str | Unset = UNSET
        if not isinstance(self.grant_type, Unset):
            grant_type = self.grant_type

        client_id: None | str | Unset
        if isinstance(self.client_id, Unset):
            client_id = UNSET
        else:
            client_id = self.client_id

        client_secret: None | str | Unset
        if isinstance(self.client_secret, Unset):
            client_secret = UNSET
        else:
            client_secret = self.client_secret

        scopes: list[str] | None | Unset
        if isinstance(self.scopes, Unset):
            scopes = UNSET
        elif isinstance(self.scopes, list):
            scopes = self.scopes

        else:
            scopes = self.scopes

        token_endpoint_auth_method: None | str | Unset
        if isinstance(self.token_endpoint_auth_method, Unset):
            token_endpoint_auth_method = UNSET
        elif isinstance(self.token_endpoint_auth_method, str):
            token_endpoint_auth_method = self.token_endpoint_auth_method
        else:
            token_endpoint_auth_method = self.token_endpoint_auth_method

        private_key: None | str | Unset
        if isinstance(self.private_key, Unset):
            private_key = UNSET
        else:
            private_key = self.private_key

        per_agent: bool | None | Unset
        if isinstance(self.per_agent, Unset):
            per_agent = UNSET
        else:
            per_agent = self.per_agent

        token_endpoint: None | str | Unset
        if isinstance(self.token_endpoint, Unset):
            token_endpoint = UNSET
        else:
            token_endpoint = self.token_endpoint

        audience: None | str | Unset
        if isinstance(self.audience, Unset):
            audience = UNSET
        else:
            audience = self.audience

        resource: None | str | Unset
        if isinstance(self.resource, Unset):
            resource = UNSET
        else:
            resource = self.resource

        idp: dict[str, Any] | None | Unset
        if isinstance(self.idp, Unset):
            idp = UNSET
        elif isinstance(self.idp, IdentityProvider):
            idp = self.idp.to_dict()
        else:
            idp = self.idp

        identity_assertion: None | str | Unset
        if isinstance(self.identity_assertion, Unset):
            identity_assertion = UNSET
        else:
            identity_assertion = self.identity_assertion

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
            }
        )
        if grant_type is not UNSET:
            field_dict["grant_type"] = grant_type
        if client_id is not UNSET:
            field_dict["client_id"] = client_id
        if client_secret is not UNSET:
            field_dict["client_secret"] = client_secret
        if scopes is not UNSET:
            field_dict["scopes"] = scopes
        if token_endpoint_auth_method is not UNSET:
            field_dict["token_endpoint_auth_method"] = token_endpoint_auth_method
        if private_key is not UNSET:
            field_dict["private_key"] = private_key
        if per_agent is not UNSET:
            field_dict["per_agent"] = per_agent
        if token_endpoint is not UNSET:
            field_dict["token_endpoint"] = token_endpoint
        if audience is not UNSET:
            field_dict["audience"] = audience
        if resource is not UNSET:
            field_dict["resource"] = resource
        if idp is not UNSET:
            field_dict["idp"] = idp
        if identity_assertion is not UNSET:
            field_dict["identity_assertion"] = identity_assertion

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.identity_provider import IdentityProvider

        d = dict(src_dict)
        type_ = check_o_auth_kind(d.pop("type"))

        _grant_type = d.pop("grant_type", UNSET)
        grant_type: OAuthGrant | Unset
        if isinstance(_grant_type, Unset):
            grant_type = UNSET
        else:
            grant_type = check_o_auth_grant(_grant_type)

        def _parse_client_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_id = _parse_client_id(d.pop("client_id", UNSET))

        def _parse_client_secret(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        client_secret = _parse_client_secret(d.pop("client_secret", UNSET))

        def _parse_scopes(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                scopes_type_0 = cast(list[str], data)

                return scopes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        scopes = _parse_scopes(d.pop("scopes", UNSET))

        def _parse_token_endpoint_auth_method(
            data: object,
        ) -> None | TokenEndpointAuth | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                token_endpoint_auth_method_type_0 = check_token_endpoint_auth(data)

                return token_endpoint_auth_method_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TokenEndpointAuth | Unset, data)

        token_endpoint_auth_method = _parse_token_endpoint_auth_method(
            d.pop("token_endpoint_auth_method", UNSET)
        )

        def _parse_private_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        private_key = _parse_private_key(d.pop("private_key", UNSET))

        def _parse_per_agent(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        per_agent = _parse_per_agent(d.pop("per_agent", UNSET))

        def _parse_token_endpoint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        token_endpoint = _parse_token_endpoint(d.pop("token_endpoint", UNSET))

        def _parse_audience(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        audience = _parse_audience(d.pop("audience", UNSET))

        def _parse_resource(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource = _parse_resource(d.pop("resource", UNSET))

        def _parse_idp(data: object) -> IdentityProvider | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                idp_type_0 = IdentityProvider.from_dict(data)

                return idp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(IdentityProvider | None | Unset, data)

        idp = _parse_idp(d.pop("idp", UNSET))

        def _parse_identity_assertion(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        identity_assertion = _parse_identity_assertion(
            d.pop("identity_assertion", UNSET)
        )

        o_auth_config = cls(
            type_=type_,
            grant_type=grant_type,
            client_id=client_id,
            client_secret=client_secret,
            scopes=scopes,
            token_endpoint_auth_method=token_endpoint_auth_method,
            private_key=private_key,
            per_agent=per_agent,
            token_endpoint=token_endpoint,
            audience=audience,
            resource=resource,
            idp=idp,
            identity_assertion=identity_assertion,
        )

        o_auth_config.additional_properties = d
        return o_auth_config

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
