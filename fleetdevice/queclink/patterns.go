package queclink

import (
	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// The regular expressions of Queclink's @Track reports, as Traccar's
// Gl200TextProtocolDecoder spells them.

// glEnd ends a report's pattern as most end: the device's time, the count
// number, the `$`.
var glEnd = devproto.NewPattern().
	Number("(dddd)(dd)(dd)").           // date (yyyymmdd)
	Number("(dd)(dd)(dd)").Optional(2). // time (hhmmss)
	Text(",").
	Number("(xxxx)"). // count number
	Text("$").Optional(1).
	String()

var (
	glLocation = devproto.NewPattern().
			Number("(d{1,2}.?d?)?,").           // hdop
			Number("(d{1,3}.d)?,").             // speed
			Number("(d{1,3}.?d?)?,").           // course
			Number("(-?d{1,5}.d)?,").           // altitude
			Number("(-?d{1,3}.d{6})?,").        // longitude
			Number("(-?d{1,2}.d{6})?,").        // latitude
			Number("(dddd)(dd)(dd)").           // date (yyyymmdd)
			Number("(dd)(dd)(dd)").Optional(2). // time (hhmmss)
			GroupBegin().
			Number(",d+").                  // wifi count
			Number("((?:,x{12},-d+,,,)+)"). // wifi
			GroupEnd("?").
			Text(",").
			Number("(d+)?,"). // mcc
			Number("(d+)?,"). // mnc
			GroupBegin().
			Number("(d+),"). // lac
			Number("(d+),"). // cid
			Or().
			Number("(x+)?,"). // lac
			Number("(x+)?,"). // cid
			GroupEnd("").
			Number("(?:d+|(d+.d))?,") // rssi / odometer

	glLocationFind = glLocation.Anywhere()

	glVer = devproto.NewPattern().
		Text("+").Expression("(?:RESP|BUFF):GTVER,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,").           // device name
		Expression("([^,]*),").         // device type
		Number("(xxxx),").              // firmware version
		Number("(xxxx),").              // hardware version
		Number("(dddd)(dd)(dd)").       // date (yyyymmdd)
		Number("(dd)(dd)(dd),").        // time (hhmmss)
		Number("(xxxx)").               // counter
		Text("$").Optional(1).
		Whole()

	glObd = devproto.NewPattern().
		Text("+RESP:GTOBD,").
		Expression("(?:.{6}|.{10})?,").   // protocol version
		Number("(d{15}|x{14}),").         // imei
		Expression("(?:[0-9A-Z]{17})?,"). // vin
		Expression("[^,]{0,20},").        // device name
		Expression("[01],").              // report type
		Number("x{1,8},").                // report mask
		Expression("(?:[0-9A-Z]{17})?,"). // vin
		Number("[01],").                  // obd connect
		Number("(?:d{1,5})?,").           // obd voltage
		Number("(?:x{8})?,").             // support pids
		Number("(d{1,5})?,").             // engine rpm
		Number("(d{1,3})?,").             // speed
		Number("(-?d{1,3})?,").           // coolant temp
		Number("(d+.?d*|Inf|NaN)?,").     // fuel consumption
		Number("(d{1,5})?,").             // dtcs cleared distance
		Number("(?:d{1,5})?,").           //
		Expression("([01])?,").           // obd connect
		Number("(d{1,3})?,").             // number of dtcs
		Number("(x*),").                  // dtcs
		Number("(d{1,3})?,").             // throttle
		Number("(?:d{1,3})?,").           // engine load
		Number("(d{1,3})?,").             // fuel level
		Expression("(?:[0-9A],)?").       // obd protocol
		Number("(d+),").                  // odometer
		Expression(glLocation.String()).  //
		Number("(d{1,7}.d)?,").           // odometer
		Expression(glEnd).Whole()

	glFri = devproto.NewPattern().
		Text("+").Expression("(?:RESP|BUFF):GT...,").
		Expression("(?:.{6}|.{10})?,").     // protocol version
		Number("(d{15}|x{14}),").           // imei
		Expression("(?:([0-9A-Z]{17}),)?"). // vin
		Expression("[^,]*,").               // device name
		Number("(d+)?,").                   // power
		Number("(d{1,2}),").Optional(1).    // report type
		Number("d{1,2},").Optional(1).      // count
		Number("d*,").Optional(1).          // reserved
		Number("(d+),").Optional(1).        // battery
		Expression("((?:").
		Expression(devproto.NonCapturing(glLocation.String())). // read again by glLocationFind
		Expression(")+)").
		GroupBegin().
		Number("d{1,2},").
		Number("(d{1,5})?,").     // battery
		Number("(d{1,3}),").      // battery level
		Number("[01],").          // mode
		Number("(?:[01])?,").     // motion
		Number("(-?d{1,2}.d)?,"). // temperature
		Or().
		Number("(d{1,7}.d)?,").         // odometer
		Number("(d{5}:dd:dd)?,").       // hour meter
		Number("(x+)?,").               // adc 1
		Number("(x+)?,").               // adc 2
		Number("d*,").Optional(1).      // reserved
		Number("(d{1,3})?,").           // battery
		Number("(x{6})?,").             // device status
		Number("(d+)?,").               // rpm
		Number("(?:d+.?d*|Inf|NaN)?,"). // fuel consumption
		Number("(d+)?,").               // fuel level
		Or().
		Number("(-?d),").    // rssi
		Number("(d{1,3}),"). // battery
		Or().
		Number("(d{1,7}.d)?,").Optional(1). // odometer
		Number("(d{1,3})?,").               // battery
		GroupEnd("").
		Any().
		Expression(glEnd).Whole()

	glLsw = devproto.NewPattern().
		Text("+RESP:").Expression("GT[LT]SW,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,").           // device name
		Number("[01],").                // type
		Number("([01]),").              // state
		Expression(glLocation.String()).
		Expression(glEnd).Whole()

	glIda = devproto.NewPattern().
		Text("+RESP:GTIDA,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,,").          // device name
		Number("([^,]+),").             // rfid
		Expression("[01],").            // report type
		Number("1,").                   // count
		Expression(glLocation.String()).
		Number("(d+.d),"). // odometer
		Text(",,,,").
		Expression(glEnd).Whole()

	glWif = devproto.NewPattern().
		Text("+RESP:GTWIF,").
		Expression("(?:.{6}|.{10})?,").      // protocol version
		Number("(d{15}|x{14}),").            // imei
		Expression("[^,]*,").                // device name
		Number("(d+),").                     // count
		Number("((?:x{12},-?d+,,,,)+),,,,"). // wifi
		Number("(d{1,3}),").                 // battery
		Expression(glEnd).Whole()

	glGsm = devproto.NewPattern().
		Text("+RESP:GTGSM,").
		Expression("(?:.{6}|.{10})?,").     // protocol version
		Number("(d{15}|x{14}),").           // imei
		Expression("(?:STR|CTN|NMR|RTL),"). // fix type
		Expression("(.*)").                 // cells
		Expression(glEnd).Whole()

	glPna = devproto.NewPattern().
		Text("+RESP:GT").Expression("P[NF]A,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,").           // device name
		Expression(glEnd).Whole()

	glDar = devproto.NewPattern().
		Text("+RESP:GTDAR,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,").           // device name
		Number("(d),").                 // warning type
		Number("(d{1,2}),,,").          // fatigue degree
		Expression(glLocation.String()).
		Any().
		Expression(glEnd).Whole()

	glDtt = devproto.NewPattern().
		Text("+RESP:GTDTT,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,,,").         // device name
		Number("d,").                   // data type
		Number("d+,").                  // data length
		Number("(x+),").                // data
		Expression(glEnd).Whole()

	glBaa = devproto.NewPattern().
		Text("+RESP:GTBAA,").
		Expression("(?:.{6}|.{10})?,").  // protocol version
		Number("(d{15}|x{14}),").        // imei
		Expression("[^,]*,").            // device name
		Number("x+,").                   // index
		Number("d,").                    // accessory type
		Number("d,").                    // accessory model
		Number("x+,").                   // alarm type
		Number("(x{4}),").               // append mask
		Expression("((?:[^,]+,){0,6})"). // accessory optionals
		Expression(glLocation.String()).
		Any().
		Expression(glEnd).Whole()

	glBid = devproto.NewPattern().
		Text("+RESP:GTBID,").
		Expression("(?:.{6}|.{10})?,").  // protocol version
		Number("(d{15}|x{14}),").        // imei
		Expression("[^,]*,").            // device name
		Number("d,").                    // count
		Number("d,").                    // accessory model
		Number("(x{4}),").               // append mask
		Expression("((?:[^,]+,){0,2})"). // accessory optionals
		Expression(glLocation.String()).
		Any().
		Expression(glEnd).Whole()

	glLsa = devproto.NewPattern().
		Text("+RESP:GTLSA,").
		Expression("(?:.{6}|.{10})?,"). // protocol version
		Number("(d{15}|x{14}),").       // imei
		Expression("[^,]*,").           // device name
		Number("d,").                   // event state 1
		Number("d,").                   // event state 2
		Number("d+,").                  // number
		Expression(glLocation.String()).
		Number("d+,").        // bit error rate
		Number("(d),").       // light level
		Number("(d+),").      // battery level
		Number("[01],").      // mode selection
		Number("[01]?,").     // movement status
		Number("(-?d+.d)?,"). // temperature
		Expression(glEnd).Whole()
)
