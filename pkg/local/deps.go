package local

import (
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/bucket"
	"github.com/scangate/scangate/pkg/config"
	"github.com/scangate/scangate/pkg/dispatch"
	"github.com/scangate/scangate/pkg/egress"
	"github.com/scangate/scangate/pkg/lane"
	"github.com/scangate/scangate/pkg/seal"
	"github.com/scangate/scangate/pkg/store"
)

// deps is what the local stack gives one function (ops.Deps): every
// dependency, its own store and bucket when Options asks for them.
type deps struct {
	store   *store.Store
	log     *slog.Logger
	now     func() time.Time
	config  config.Config
	cursors api.Cursors
	bucket  *bucket.Bucket
	lanes   lane.Queues
	bus     dispatch.Bus
	box     *seal.Box
	egress  egress.Policy
}

func (d deps) Store() *store.Store    { return d.store }
func (d deps) Log() *slog.Logger      { return d.log }
func (d deps) Now() time.Time         { return d.now() }
func (d deps) Config() config.Config  { return d.config }
func (d deps) Cursors() api.Cursors   { return d.cursors }
func (d deps) Bucket() *bucket.Bucket { return d.bucket }
func (d deps) Queues() lane.Queues    { return d.lanes }
func (d deps) Bus() dispatch.Bus      { return d.bus }
func (d deps) Box() *seal.Box         { return d.box }
func (d deps) Egress() egress.Policy  { return d.egress }

// S3 is the client of the local S3-compatible server, the uploads
// bucket's.
func (d deps) S3() *s3.Client { return d.bucket.Client() }
