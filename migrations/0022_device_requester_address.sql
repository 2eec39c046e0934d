-- The cap on pending device authorizations per client and requesting address
-- (DEVICE_MAX_PENDING_PER_ADDRESS): each request keeps who asked (the caller's address as a
-- throttle unit: an IPv4 address, or an IPv6 /64), and this index answers the count from the
-- pending rows of one client and address alone. Rows made before have none and count for no address.
ALTER TABLE device_authorizations ADD COLUMN requester_address text;
CREATE INDEX device_authorizations_pending_address_idx ON device_authorizations (client_id, requester_address, expires_at) WHERE status = 'pending';
